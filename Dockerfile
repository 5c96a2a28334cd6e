# One image for every okey101 service: `okey101 serve SERVICE` (lobby, table, scoring, rules, bot,
# and the edge, which serves the web client's page built here too) and `okey101 migrate SERVICE`
# (the migration Jobs). k8s/ runs it as uid 10001 on a read-only
# root file system; nothing in it writes outside /tmp.
#
#   docker build -t okey101:dev .
#   docker run --rm -p 50054:50054 okey101:dev serve rules --host 0.0.0.0
#
# The base is pinned to an exact Python release on Debian 12 (slim). A release pipeline should
# pin it further by digest (python:3.11.13-slim-bookworm@sha256:...), as k8s/overlays/prod pins
# the image it deploys.

# ---- build: a virtual environment with the pinned dependencies, the package and its gRPC code
FROM python:3.11.13-slim-bookworm AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    VIRTUAL_ENV=/opt/okey101 \
    PATH=/opt/okey101/bin:$PATH

WORKDIR /src
RUN python -m venv /opt/okey101

# Dependencies first (pinned in pyproject.toml), so a change of code reuses this layer: the
# servers' `dependencies` only, none of the extras (the terminal client, the benchmarks, the tests).
COPY pyproject.toml ./
RUN python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' > /tmp/requirements.txt \
    && pip install --requirement /tmp/requirements.txt

# The package okey101, at services/okey101/ as in the repository.
COPY README.md ./
COPY protos ./protos
COPY services ./services
RUN pip install --no-deps . \
    && mkdir -p /opt/okey101/gen \
    && python -m grpc_tools.protoc -I protos -I protos/third_party --python_out=/opt/okey101/gen \
        --pyi_out=/opt/okey101/gen --grpc_python_out=/opt/okey101/gen protos/okey/v1/*.proto \
    && touch /opt/okey101/gen/okey/__init__.py /opt/okey101/gen/okey/v1/__init__.py \
    && python -c 'import sysconfig; open(sysconfig.get_paths()["purelib"] + "/okey101_gen.pth", "w").write("/opt/okey101/gen\n")' \
    && python -m compileall -q /opt/okey101 \
    && okey101 --help > /dev/null \
    && python -c 'import okey.v1.rules_pb2_grpc, okey101.platform.server'

# ---- web: the web client's page (web/dist, docs/web.md), generated from the protos and bundled
# with the npm packages web/package-lock.json pins; the edge serves it at /.
FROM node:20.19.5-bookworm-slim AS web

WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY buf.yaml /src/
COPY protos /src/protos
COPY web/index.html web/tsconfig.json web/vite.config.ts web/buf.gen.yaml ./
COPY web/src ./src
RUN npm run build

# ---- runtime: the virtual environment alone, run by an unprivileged user
FROM python:3.11.13-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/okey101 \
    PATH=/opt/okey101/bin:$PATH \
    OKEY_VAR_DIR=/tmp/okey101 \
    OKEY_WEB_DIR=/opt/okey101/web

RUN groupadd --system --gid 10001 okey101 \
    && useradd --system --uid 10001 --gid okey101 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin okey101

COPY --from=build /opt/okey101 /opt/okey101
COPY --from=web /src/web/dist /opt/okey101/web

WORKDIR /tmp
USER 10001:10001

# gRPC: lobby 50051, table 50052, scoring 50053, rules 50054, bot 50055; the edge: HTTP 8080;
# metrics 9101-9105, the edge's 9107.
EXPOSE 50051 50052 50053 50054 50055 8080 9101 9102 9103 9104 9105 9107

ENTRYPOINT ["okey101"]
CMD ["--help"]
