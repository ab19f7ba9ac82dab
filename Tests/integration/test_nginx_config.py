"""The committed nginx files: the example site file passes `nginx -t` as an operator would
install it, and the development config of scripts/lib.sh includes kiln-locations.conf as is."""
from __future__ import annotations

import re
import shutil
import subprocess

from helpers import LIMIT_CONN, LIB_SH, NGINX_DIR


def nginx_bin():
    return shutil.which("nginx") or "/usr/sbin/nginx"


def test_example_site_file_is_valid(environment_ok, tmp_path):
    site = (NGINX_DIR / "kiln.conf").read_text()
    site = site.replace("include kiln-locations.conf;", f"include {NGINX_DIR / 'kiln-locations.conf'};")
    site = re.sub(r"listen 8080;", "listen 127.0.0.1:1;", site)
    (tmp_path / "kiln.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  include {tmp_path}/kiln.conf;\n}}\n")
    p = subprocess.run([nginx_bin(), "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                        "-e", str(tmp_path / "error.log")], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


def test_locations_file_settings():
    text = (NGINX_DIR / "kiln-locations.conf").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    assert re.search(r"fastcgi_pass\s+kiln;", code)
    assert re.search(r"include\s+/etc/nginx/fastcgi_params;", code)
    assert re.search(r"fastcgi_intercept_errors\s+off;", code)
    assert re.search(rf"limit_conn\s+kiln_conn\s+{LIMIT_CONN};", code), "LIMIT_CONN in helpers.py out of date"
    assert re.search(r"limit_conn_status\s+503;", code)
    assert not re.search(r"fastcgi_keep_conn\s+on", code), "no keep-alive to single-request workers"
    assert re.search(r"rewrite\s+\S*thumb\S*\s+/rs:\$1:\$2:fill/-/\$3\s+last;", code)
    assert re.search(r"fastcgi_param\s+KILN_TRUSTED\s+\$kiln_trusted\s+if_not_empty;", code)


def test_dev_config_includes_the_locations_file(environment_ok, tmp_path):
    subprocess.run(["bash", "-c", 'source "$1" && kiln_write_nginx_conf "$2" 1234 "$2/k.sock" "$2"', "_",
                    str(LIB_SH), str(tmp_path)], check=True, timeout=30)
    conf = (tmp_path / "nginx.conf").read_text()
    assert f"include {NGINX_DIR / 'kiln-locations.conf'};" in conf
    assert f"server unix:{tmp_path}/k.sock;" in conf
    assert "limit_conn_zone" in conf
    p = subprocess.run([nginx_bin(), "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                        "-e", str(tmp_path / "logs" / "error.log")], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
