# nginx for docker/compose.yaml: Debian 12's own nginx (nginx-light: core, FastCGI, rewrite,
# limit_conn/limit_req) on the same base image as kiln. The configuration is not baked in:
# compose mounts docker/nginx.conf and the repository's nginx/kiln-locations.conf.
#
#   docker build -f docker/nginx.Dockerfile -t kiln-nginx:local docker
#
# The master runs as root (to read the mounted files and bind), its workers as www-data
# (`user www-data;` in docker/nginx.conf): the group kiln gives its socket to.
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light \
 && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
 && nginx -v
EXPOSE 8080
# SIGQUIT: graceful stop (requests in flight finish).
STOPSIGNAL SIGQUIT
# nginx alone (/nginx-health); compose checks the whole path (/_kiln/health) instead.
HEALTHCHECK --interval=10s --timeout=4s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /nginx-health HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
CMD ["nginx", "-g", "daemon off;"]
