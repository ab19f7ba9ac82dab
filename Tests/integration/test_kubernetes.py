"""deploy/kubernetes/: the base and every overlay rendered by `kubectl kustomize` and validated
against Kubernetes's schemas (PyPI kubernetes-validate, which ships them: nothing is downloaded),
strict mode (an unknown field fails), for KUBERNETES_VERSIONS; then what the schemas cannot say:
the FastCGI socket shared by both containers, probes, non-root read-only containers, a grace
period longer than limits.render_timeout + server.shutdown_timeout (+ the preStop sleep) read
from the rendered kiln.toml, resources that follow docs/deploy.md's arithmetic from the same
file, placeholders kiln refuses, and the copied nginx and Varnish recipes unchanged but for
their addresses. docs/deploy.md, "Kubernetes".
"""
from __future__ import annotations

import base64
import copy
import re
import subprocess
import tomllib
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from helpers import KILN_BIN, REPO

KUBECTL = "/usr/bin/kubectl"
DEPLOY = REPO / "deploy" / "kubernetes"
# The oldest supported release this targets, and the newest the kubectl here speaks.
KUBERNETES_VERSIONS = ["1.30.0", "1.32.0"]
DIRS = ["base"] + sorted(f"overlays/{p.name}" for p in (DEPLOY / "overlays").iterdir() if p.is_dir())
EXPECTED_DIRS = {"base", "overlays/pvc-cache", "overlays/shared-store", "overlays/varnish-edge",
                 "overlays/ring", "overlays/custom-metrics"}

MIB = 1024 * 1024
# docs/deploy.md, "Kubernetes" (figures of docs/benchmarks.md, "Memory", rounded up).
MASTER_MIB = 16
WORKER_BASELINE_MIB = 32
NGINX_MEMORY_MIB = 64


def render(d: str) -> list[dict]:
    out = subprocess.run([KUBECTL, "kustomize", str(DEPLOY / d)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, f"kubectl kustomize {d}: {out.stderr}"
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


_rendered: dict[str, list[dict]] = {}


def rendered(d: str) -> list[dict]:
    if d not in _rendered:
        _rendered[d] = render(d)
    return copy.deepcopy(_rendered[d])


def size(text: str) -> int:
    """A Kiln size ("256MiB") or a Kubernetes quantity ("720Mi", "2Gi") in bytes."""
    m = re.fullmatch(r"\s*([0-9_]+)\s*([KMGT]i?B?|B)?\s*", text)
    assert m, f"not a size: {text!r}"
    n = int(m.group(1).replace("_", ""))
    unit = (m.group(2) or "B").rstrip("B").rstrip("i")
    return n * {"": 1, "K": 1024, "M": MIB, "G": 1024 * MIB, "T": 1024 ** 2 * MIB}[unit]


def seconds(text: str) -> float:
    m = re.fullmatch(r"([0-9.]+)(ms|s|m|h)", text)
    assert m, f"not a duration: {text!r}"
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def cpu(text: str | int) -> float:
    text = str(text)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def pod_specs(docs: list[dict]) -> list[tuple[str, dict]]:
    return [(f"{d['kind']}/{d['metadata']['name']}", d["spec"]["template"]["spec"])
            for d in docs if d["kind"] in ("Deployment", "StatefulSet")]


def kiln_toml(docs: list[dict], spec: dict) -> dict:
    """The kiln.toml of the ConfigMap the pod mounts."""
    name = next(v["configMap"]["name"] for v in spec["volumes"] if v["name"] == "kiln-config")
    cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == name)
    return tomllib.loads(cm["data"]["kiln.toml"])


def container(spec: dict, name: str) -> dict | None:
    return next((c for c in spec["containers"] if c["name"] == name), None)


def prestop_sleep(c: dict) -> float:
    cmd = c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
    if not cmd:
        return 0
    m = re.search(r"\bsleep (\d+)", " ".join(cmd))
    assert m, f"{c['name']}: a preStop without a sleep: {cmd}"
    return float(m.group(1))


def test_every_folder_is_tested():
    assert set(DIRS) == EXPECTED_DIRS


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("d", DIRS)
def test_renders_and_validates_strictly(d, version):
    docs = rendered(d)
    kinds = {doc["kind"] for doc in docs}
    assert {"Deployment", "Service", "ConfigMap", "Secret", "PodDisruptionBudget",
            "HorizontalPodAutoscaler"} <= kinds
    for doc in docs:
        # Every kind has a schema here (no SchemaNotFoundError passed over).
        assert kubernetes_validate.validate(doc, version, strict=True) == version.rsplit(".", 1)[0]


def test_strict_validation_refuses_an_unknown_field():
    deployment = next(d for d in rendered("base") if d["kind"] == "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFS"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[0], strict=True)


def test_the_pod_shares_the_socket_volume():
    docs = rendered("base")
    (_, spec), = pod_specs(docs)
    assert {c["name"] for c in spec["containers"]} == {"nginx", "kiln"}
    run = next(v for v in spec["volumes"] if v["name"] == "run")
    assert "emptyDir" in run
    for c in spec["containers"]:
        assert {"name": "run", "mountPath": "/run/kiln"} in c["volumeMounts"], c["name"]
    toml = kiln_toml(docs, spec)
    assert toml["server"]["listen"] == "unix:/run/kiln/kiln.sock"
    nginx_conf = next(d for d in docs if d["kind"] == "ConfigMap"
                      and d["metadata"]["name"].startswith("kiln-nginx"))["data"]["nginx.conf"]
    assert "server unix:/run/kiln/kiln.sock;" in nginx_conf
    assert "server unix:/run/kiln/kiln-status.sock;" in nginx_conf


@pytest.mark.parametrize("d", DIRS)
def test_containers_have_probes_and_run_locked_down(d):
    for where, spec in pod_specs(rendered(d)):
        pod_sc = spec.get("securityContext", {})
        assert pod_sc.get("runAsNonRoot") is True, where
        assert pod_sc.get("seccompProfile") == {"type": "RuntimeDefault"}, where
        assert spec.get("automountServiceAccountToken") is False, where
        for c in spec["containers"]:
            what = f"{where} container {c['name']}"
            assert "readinessProbe" in c and "livenessProbe" in c, what
        for c in spec["containers"] + spec.get("initContainers", []):
            what = f"{where} container {c['name']}"
            sc = c.get("securityContext", {})
            uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
            assert isinstance(uid, int) and uid > 0, what
            assert sc.get("readOnlyRootFilesystem") is True, what
            assert sc.get("allowPrivilegeEscalation") is False, what
            assert sc.get("capabilities", {}).get("drop") == ["ALL"], what
            assert "memory" in c.get("resources", {}).get("limits", {}), what
        # The images' users: kiln is uid 10001 (docker/Dockerfile), nginx www-data (33).
        for name, uid in (("kiln", 10001), ("nginx", 33)):
            c = container(spec, name)
            if c:
                assert c["securityContext"]["runAsUser"] == uid, where


@pytest.mark.parametrize("d", DIRS)
def test_kiln_probes_and_grace_period_follow_kiln_toml(d):
    docs = rendered(d)
    found = 0
    for where, spec in pod_specs(docs):
        kiln = container(spec, "kiln")
        if not kiln:
            continue
        found += 1
        toml = kiln_toml(docs, spec)
        health = ["kiln", "health", "--config", "/etc/kiln/kiln.toml"]
        assert kiln["livenessProbe"]["exec"]["command"] == health, where
        render_timeout = seconds(toml["limits"]["render_timeout"])
        shutdown_timeout = seconds(toml["server"]["shutdown_timeout"])
        grace = spec["terminationGracePeriodSeconds"]
        assert grace > prestop_sleep(kiln) + render_timeout + shutdown_timeout, where
        nginx = container(spec, "nginx")
        if nginx:
            # kiln keeps its socket while nginx drains.
            assert 0 < prestop_sleep(nginx) < prestop_sleep(kiln), where
            assert "nginx -c /etc/nginx/kiln/nginx.conf -e stderr -s quit" in \
                " ".join(nginx["lifecycle"]["preStop"]["exec"]["command"]), where
            assert nginx["readinessProbe"]["httpGet"]["path"] == "/_kiln/health", where
        # The peer secret: every request to kiln needs it once set, /_kiln/health included, so a
        # probe must be `kiln health` (which sends it), not nginx's /_kiln/health without it.
        if toml["server"].get("peer_secret") or toml["server"].get("peer_secret_file"):
            assert kiln["readinessProbe"]["exec"]["command"] == health, where
            assert not nginx, f"{where}: nginx's /_kiln/health would need the peer secret"
    assert found


@pytest.mark.parametrize("d", DIRS)
def test_resources_follow_the_documented_arithmetic(d):
    """memory = 16 MiB + workers x (32 MiB + cache.memory_cost_limit + limits.max_request_memory),
    request = limit; cpu request = workers; limits.max_worker_memory = a worker's share."""
    docs = rendered(d)
    for where, spec in pod_specs(docs):
        kiln = container(spec, "kiln")
        if not kiln:
            continue
        toml = kiln_toml(docs, spec)
        env = {e["name"] for e in kiln.get("env", [])}
        assert not env & {"KILN_SERVER_WORKERS", "KILN_LIMITS_MAX_REQUEST_MEMORY",
                          "KILN_CACHE_MEMORY_COST_LIMIT", "KILN_LIMITS_MAX_WORKER_MEMORY"}, where
        assert "args" not in kiln and "command" not in kiln, where
        workers = toml["server"]["workers"]
        per_worker = (WORKER_BASELINE_MIB * MIB + size(toml["cache"]["memory_cost_limit"])
                      + size(toml["limits"]["max_request_memory"]))
        expected = MASTER_MIB * MIB + workers * per_worker
        res = kiln["resources"]
        assert size(res["limits"]["memory"]) == expected, where
        assert size(res["requests"]["memory"]) == expected, where
        assert cpu(res["requests"]["cpu"]) == workers, where
        assert "cpu" not in res["limits"], where
        assert size(toml["limits"]["max_worker_memory"]) == per_worker, where
        nginx = container(spec, "nginx")
        if nginx:
            assert size(nginx["resources"]["limits"]["memory"]) == NGINX_MEMORY_MIB * MIB, where
        # The disk cache's volume holds cache.disk_size_limit with room for the sweep's lag.
        limit = size(toml["cache"]["disk_size_limit"])
        vol = next((v for v in spec["volumes"] if v["name"] == "cache"), None)
        if vol and "emptyDir" in vol:
            assert size(vol["emptyDir"]["sizeLimit"]) >= 1.25 * limit, where
        elif vol:
            pvc = next(x for x in docs if x["kind"] == "PersistentVolumeClaim"
                       and x["metadata"]["name"] == vol["persistentVolumeClaim"]["claimName"])
            assert size(pvc["spec"]["resources"]["requests"]["storage"]) >= 1.25 * limit, where
        else:
            (tmpl,) = [t for d2 in docs if d2["kind"] == "StatefulSet"
                       for t in d2["spec"].get("volumeClaimTemplates", []) if t["metadata"]["name"] == "cache"]
            assert size(tmpl["spec"]["resources"]["requests"]["storage"]) >= 1.25 * limit, where


@pytest.mark.parametrize("d", DIRS)
def test_kiln_toml_passes_kiln_config_check_and_placeholders_do_not(d, tmp_path):
    """The rendered kiln.toml is what `kiln serve` accepts (with keys in place of the Secret's
    files), and the Secret's placeholder files are refused, so a forgotten one cannot serve."""
    docs = rendered(d)
    where, spec = next((w, s) for w, s in pod_specs(docs) if container(s, "kiln"))
    cm_text = next(x for x in docs if x["kind"] == "ConfigMap" and x["metadata"]["name"]
                   == next(v["configMap"]["name"] for v in spec["volumes"] if v["name"] == "kiln-config"))
    toml_text = cm_text["data"]["kiln.toml"]
    secret_name = next(v["secret"]["secretName"] for v in spec["volumes"] if v["name"] == "kiln-secrets")
    secret = next(x for x in docs if x["kind"] == "Secret" and x["metadata"]["name"] == secret_name)
    placeholders = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    assert all(v.strip() == b"REPLACE-ME" for v in placeholders.values()), placeholders
    (tmp_path / "k").write_text("00" * 32 + "\n")
    (tmp_path / "s").write_text("11" * 32 + "\n")
    (tmp_path / "p").write_text("22" * 32 + "\n")
    (tmp_path / "images").mkdir()

    def check(keys: Path, peer: Path) -> subprocess.CompletedProcess:
        t = toml_text.replace('"/run/secrets/kiln/keys"', f'"{keys}"')
        t = t.replace('"/run/secrets/kiln/salts"', f'"{tmp_path / "s"}"')
        t = t.replace('"/run/secrets/kiln/peer-secret"', f'"{peer}"')
        t = t.replace('"/srv/images"', f'"{tmp_path / "images"}"')
        t = t.replace('"/var/cache/kiln"', f'"{tmp_path / "cache"}"')
        f = tmp_path / "kiln.toml"
        f.write_text(t)
        env = {"PATH": "/usr/bin:/bin", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"}
        return subprocess.run([str(KILN_BIN), "config", "check", str(f)], capture_output=True,
                              text=True, timeout=60, env=env)

    good = check(tmp_path / "k", tmp_path / "p")
    assert good.returncode == 0 and good.stdout.strip() == "ok", f"{where}: {good.stdout}{good.stderr}"
    (tmp_path / "placeholder").write_bytes(placeholders["keys"])
    bad = check(tmp_path / "placeholder", tmp_path / "p")
    assert bad.returncode == 2, f"{where}: placeholder keys accepted: {bad.stdout}{bad.stderr}"
    if "peer_secret_file" in tomllib.loads(toml_text)["server"]:
        (tmp_path / "peer-placeholder").write_bytes(placeholders["peer-secret"])
        bad = check(tmp_path / "k", tmp_path / "peer-placeholder")
        assert bad.returncode == 2, f"{where}: placeholder peer secret accepted: {bad.stdout}"


def strip_header(text: str) -> str:
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("# overlays/"):
        lines.pop(0)
    while lines and lines[0].startswith("# ") and not lines[0].startswith("# Kiln"):
        lines.pop(0)
    return "".join(lines)


def test_copied_recipes_are_the_repositorys():
    assert (DEPLOY / "base" / "kiln-locations.conf").read_text() == \
        (REPO / "nginx" / "kiln-locations.conf").read_text()
    vcl = (REPO / "varnish" / "kiln.vcl").read_text()
    for a, b in [('    .host = "127.0.0.1";\n    .port = "8080";', '    .host = "kiln";\n    .port = "80";'),
                 ('acl purgers {\n', 'acl purgers {\n    "10.244.0.0"/16;\n'),
                 ('acl monitors {\n', 'acl monitors {\n    "10.244.0.0"/16;\n')]:
        assert vcl.count(a) == 1
        vcl = vcl.replace(a, b)
    copied = (DEPLOY / "overlays" / "varnish-edge" / "kiln.vcl").read_text()
    assert copied.split("\n", 3)[3] == vcl
    hosts = (REPO / "nginx" / "kiln-hosts.conf").read_text()
    for i in range(3):
        hosts = hosts.replace(f"    server 10.0.0.1{i + 1}:9000 ", f"    server kiln-host-{i}.kiln-hosts:9000 ")
    hosts = hosts.replace("include /etc/nginx/kiln-peer-secret.conf;",
                          "include /etc/nginx/secret/kiln-peer-secret.conf;")
    copied = (DEPLOY / "overlays" / "ring" / "kiln-hosts.conf").read_text()
    assert copied.split("\n", 3)[3] == hosts


def test_ring_hosts_match_the_statefulset_and_nginx_sends_the_secret():
    docs = rendered("overlays/ring")
    sts = next(d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "kiln-host")
    svc = next(d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == sts["spec"]["serviceName"])
    assert svc["spec"]["clusterIP"] == "None"
    conf = next(d for d in docs if d["kind"] == "ConfigMap"
                and d["metadata"]["name"].startswith("kiln-nginx"))["data"]["kiln-hosts.conf"]
    servers = re.findall(r"^\s*server (\S+):9000 ", conf, re.M)
    assert servers == [f"kiln-host-{i}.kiln-hosts" for i in range(sts["spec"]["replicas"])]
    front = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    init = " ".join(front["initContainers"][0]["command"])
    assert "KILN_PEER_SECRET" in init and "/etc/nginx/secret/kiln-peer-secret.conf" in init
    toml = kiln_toml(docs, sts["spec"]["template"]["spec"])
    assert toml["server"]["listen"].endswith(":9000")
    assert toml["server"]["peer_secret_file"] == "/run/secrets/kiln/peer-secret"


def test_custom_metrics_rules_serve_the_hpa():
    rules = yaml.safe_load((DEPLOY / "overlays" / "custom-metrics" / "prometheus-adapter-rules.yaml").read_text())
    served = {r["name"]["as"] for r in rules["rules"]}
    hpa = next(d for d in rendered("overlays/custom-metrics") if d["kind"] == "HorizontalPodAutoscaler")
    wanted = {m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"}
    assert wanted and wanted <= served
    # Only metrics Kiln exports (docs/operations.md's table).
    ops = (REPO / "docs" / "operations.md").read_text()
    for r in rules["rules"]:
        exported = re.search(r"(kiln_[a-z_]+)", r["seriesQuery"]).group(1)
        assert f"`{exported}`" in ops
