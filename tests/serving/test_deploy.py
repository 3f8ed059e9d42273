"""The container image and the Kubernetes manifests agree with the app, checked without Docker or a cluster.

The manifests are validated against Kubernetes' own OpenAPI schemas (kubernetes-validate ships them; strict mode
rejects unknown fields, so a misspelled key fails); the Dockerfile is read instruction by instruction.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
import shlex

import kubernetes_validate
import pytest
import yaml

from .conftest import HEALTH, LAUNCHER, ROOT

K8S = ROOT / "deploy" / "k8s"
#: The oldest Kubernetes still commonly run, and the newest the validator knows.
VERSIONS = ("1.30.0", kubernetes_validate.latest_version())
#: What the running app reads: must be in the image.
APP_FILES = ("app.py", "requirements.txt", ".streamlit", "kvcore", "course", "charts", "ui", "i18n", "lessons",
             "data", "scripts")  # fmt: skip


def manifests() -> dict[str, dict]:
    """Every resource in deploy/k8s/, by kind."""
    found: dict[str, dict] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for resource in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            assert resource["kind"] not in found, f"two {resource['kind']} resources"
            found[resource["kind"]] = resource
    return found


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    lines = [line for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
             if not line.lstrip().startswith("#")]  # fmt: skip
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [(m.group(1).upper(), m.group(2).strip()) for m in re.finditer(r"^(\w+)\s+(.*)$", joined, re.MULTILINE)]


def instruction(name: str) -> list[str]:
    return [arguments for found, arguments in dockerfile() if found == name]


def exec_form(arguments: str) -> list[str]:
    """A JSON-array (exec form) instruction's argument list."""
    parsed = json.loads(arguments)
    assert isinstance(parsed, list), f"not exec form: {arguments}"
    return parsed


def flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def container() -> dict:
    return manifests()["Deployment"]["spec"]["template"]["spec"]["containers"][0]


def test_the_manifests_define_what_a_hosted_class_needs():
    assert set(manifests()) == {"Deployment", "Service", "Ingress", "HorizontalPodAutoscaler", "PodDisruptionBudget"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", ["Deployment", "Service", "Ingress", "HorizontalPodAutoscaler", "PodDisruptionBudget"])
def test_each_manifest_passes_kubernetes_schema_validation(kind, version):
    kubernetes_validate.validate(manifests()[kind], version, strict=True)


def test_the_validator_rejects_a_misspelled_field():
    broken = copy.deepcopy(manifests()["Deployment"])
    broken["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = broken["spec"]["template"]["spec"][
        "containers"
    ][0].pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSIONS[0], strict=True)


def test_the_image_runs_the_warm_launcher_as_a_non_root_user():
    (base,) = instruction("FROM")
    assert base == "python:3.11-slim"
    (command,) = [exec_form(arguments) for arguments in instruction("CMD")]
    assert command[:2] == ["python", str(LAUNCHER.relative_to(ROOT))]
    assert flag(command, "--server.address") == "0.0.0.0"
    (user,) = instruction("USER")
    uid, _, gid = user.partition(":")
    assert uid not in {"0", "root"} and gid not in {"0", "root"}
    security = manifests()["Deployment"]["spec"]["template"]["spec"]["securityContext"]
    assert security["runAsNonRoot"] is True
    assert (str(security["runAsUser"]), str(security["runAsGroup"])) == (uid, gid)


def test_the_health_check_probes_the_port_the_app_listens_on():
    (command,) = [exec_form(arguments) for arguments in instruction("CMD")]
    port = int(flag(command, "--server.port"))
    assert instruction("EXPOSE") == [str(port)]
    (healthcheck,) = instruction("HEALTHCHECK")
    options, _, probe = healthcheck.partition(" CMD ")
    assert "--start-period=" in options
    assert f"http://127.0.0.1:{port}{HEALTH}" in " ".join(exec_form(probe.strip()))
    app = container()
    (container_port,) = app["ports"]
    assert container_port["containerPort"] == port
    for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert app[probe_name]["httpGet"] == {"path": HEALTH, "port": container_port["name"]}, probe_name


def test_service_ingress_and_autoscaler_point_at_the_deployment():
    found = manifests()
    deployment, service, ingress, hpa = (
        found[k] for k in ("Deployment", "Service", "Ingress", "HorizontalPodAutoscaler")
    )
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert found["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] == container()["ports"][0]["name"]
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert path["backend"]["service"] == {"name": service["metadata"]["name"], "port": {"name": service_port["name"]}}
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert hpa["spec"]["minReplicas"] >= 2 and deployment["spec"]["replicas"] >= hpa["spec"]["minReplicas"]
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert "cpu" in container()["resources"]["requests"]  # Utilization is measured against the request


def test_the_ingress_pins_each_browser_to_one_pod_and_keeps_websockets_open():
    annotations = manifests()["Ingress"]["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"]
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600


def test_dockerignore_keeps_what_the_app_reads():
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]  # fmt: skip
    for name in APP_FILES:
        assert (ROOT / name).exists(), name
        assert not [p for p in patterns if fnmatch.fnmatch(name, p)], name
    assert {".venv", ".git", "tests"} <= set(patterns)


def test_the_dockerfile_installs_the_apps_requirements():
    assert "requirements.txt ." in instruction("COPY")
    installs = [shlex.split(arguments) for arguments in instruction("RUN") if "pip install" in arguments]
    assert [words[-2:] for words in installs] == [["-r", "requirements.txt"]]
