# relaybot in a container: a wheel built in one stage, installed into a slim runtime with bubblewrap.
# Build: docker build -t relaybot .   Run: see docker-compose.yaml and README "Running in a container".

FROM python:3.11-slim AS build
WORKDIR /src
RUN pip install --no-cache-dir build
COPY pyproject.toml README.md config.example.yaml ./
COPY bot ./bot
COPY channels ./channels
COPY skills ./skills
COPY workspace-template ./workspace-template
RUN python -m build --wheel --outdir /dist

FROM python:3.11-slim
# bubblewrap: exec's sandbox (it needs unprivileged user namespaces; see the README); tini reaps children.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap tini \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /dist/*.whl /tmp/
RUN pip install --no-cache-dir /tmp/*.whl && rm /tmp/*.whl
RUN useradd --create-home --uid 1000 --shell /usr/sbin/nologin relaybot \
    && mkdir -p /home/relaybot/.relaybot \
    && chown relaybot:relaybot /home/relaybot/.relaybot \
    && chmod 700 /home/relaybot/.relaybot
USER relaybot
ENV RELAYBOT_HOME=/home/relaybot/.relaybot PYTHONUNBUFFERED=1
WORKDIR /home/relaybot
VOLUME ["/home/relaybot/.relaybot"]
# health.port (or the API channel's port) serves /healthz; the check fails only when it is configured and silent.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os,sys,urllib.request; p=os.environ.get('RELAYBOT_HEALTH_PORT'); sys.exit(0) if not p else urllib.request.urlopen(f'http://127.0.0.1:{p}/healthz', timeout=4)"]
ENTRYPOINT ["tini", "--", "relaybot"]
CMD ["run"]
