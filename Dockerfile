# KV Cache Lab for a hosted class: one warm Streamlit process per container (scripts/serve_app.py imports the
# whole app before /_stcore/health answers). Scale with replicas behind a sticky balancer: deploy/k8s/.
#
#   docker build -t kv-cache-lab .
#   docker run --rm -p 8501:8501 kv-cache-lab        # then open http://localhost:8501
#
# .streamlit/config.toml (copied with the app) is the hosted config: headless, no telemetry, no file watcher,
# no tracebacks for students. Several replicas must share STREAMLIT_SERVER_COOKIE_SECRET (deploy/k8s sets it).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# A fixed numeric user, so Kubernetes' runAsNonRoot can check it (deploy/k8s/deployment.yaml uses the same ids).
RUN groupadd --gid 10001 kvlab \
    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin kvlab

WORKDIR /app
COPY requirements.txt .
RUN pip install --root-user-action=ignore -r requirements.txt

# The app, owned by root and read-only to the user that runs it (.dockerignore keeps tests, caches, .venv out).
COPY . .

USER 10001:10001
EXPOSE 8501

HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]

CMD ["python", "scripts/serve_app.py", "--server.address", "0.0.0.0", "--server.port", "8501"]
