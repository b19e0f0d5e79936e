"""Secrets planted in every input channel of a simulator recipe, and a check that none of them is in any
file under a directory or in a command's output (shared by the run/report and the Slurm submit tests)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Every value is distinctive, so finding its bytes anywhere is a leak. The channels:
SECRETS = {
    "recipe server.env HF_TOKEN": "hf_PLANTEDrecipeHF0001",
    "recipe server.env WANDB_API_KEY": "PLANTED-wandb-0002",
    "recipe server.env MY_DB_PASSWD": "PLANTED-dbpasswd-0003",
    "recipe server.env GITHUB_PAT": "ghp_PLANTEDgithub0004",
    "recipe server.env URL password": "PLANTED-urlpw-0005",
    "recipe server.env URL ?token=": "PLANTED-urltoken-0006",
    "recipe server.args api-key": "sk-PLANTED-apikey-0007",
    "recipe point env": "PLANTED-pointtoken-0008",
    "--set server.env": "PLANTED-aws-0009",
    "--set point args admin-api-key": "sk-PLANTED-admin-0010",
    "--set point env": "PLANTED-session-0011",
    "recipe server.env OPENAI_APIKEY": "PLANTED-openai-0012",
    "recipe server.env AUTH_HEADER Bearer": "PLANTEDbearer0013",
    "recipe server.env PRIVATE_KEY_PEM": "PLANTEDpemKEY0014",
    "recipe server.env SGLANG_CREDENTIALS": "PLANTED-cred-0015",
    "recipe server.env PASSPHRASE": "PLANTED-pass-0016",
    "recipe server.env webhook ?access_token=": "PLANTED-hook-0017",
    "recipe server.env Bearer by shape": "PLANTEDshape0018",
    "recipe server.env PEM by shape": "PLANTEDpemSHAPE0019",
    "recipe secret_names MY_ODD_SETTING": "PLANTED-odd-0020",
    # forms recognised by shape or syntax, under names that say nothing (harness.redact_forms)
    "Google OAuth ya29.": "PLANTEDgoogleOAuth0022abcdef",
    "Vault hvs.": "PLANTEDvaultToken0023abcdef",
    "Databricks dapi": "0123456789abcdef0123456789ab0024",
    "SendGrid SG.": "PLANTEDsendgridSecret0025abcdefXYZ",
    "Twilio auth token after SID": "fedcba9876543210fedcba987654026a",
    "Twilio SK key": "0123456789abcdef0123456789ab027b",
    "DigitalOcean dop_v1_": "0028" + "ab12" * 15,
    "Shopify shpat_": "0123456789abcdef0123456789ab0029",
    "Hugging Face api_org_": "PLANTEDhfOrgToken0030abcdef",
    "Telegram bot token": "PLANTEDtelegramBotToken0031_abcdefgh",
    "age secret key": "PLANTEDAGEKEY0032QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ",
    "ODBC Pwd=": "PLANTEDodbcPw0033",
    "netrc password": "PLANTEDnetrcPw0034",
    "mysql -p": "PLANTEDmysqlPw0035",
    "Authorization: Token": "PLANTEDdrfToken0036",
    "X-Api-Key header": "PLANTEDxApiKey0037",
    "docker config auth": "UExBTlRFRDpkb2NrZXIwMDM4",
    "Azure SAS sig=": "PLANTEDsasSig0039abc",
    "random token after a credential-like name": "PLANTEDgeneric0040Tok3nValue",
    "--set by shape": "PLANTEDsetShape0041abcdefXYZ",
}
# A name only a cluster profile declares secret (the Slurm tests submit with `write_profile`'s profile).
PROFILE_SECRET_NAME, PROFILE_SECRET = "CLUSTER_ODD_SETTING", "PLANTED-cluster-0021"


def _pem(body: str) -> str:
    return f"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----"

OVERRIDES = [
    f"server.env.AWS_SECRET_ACCESS_KEY={SECRETS['--set server.env']}",
    f"args.admin-api-key={SECRETS['--set point args admin-api-key']}",
    f"env.SESSION_SECRET={SECRETS['--set point env']}",
    f"server.env.NOTIFY_REF=SG.PlantedSetId0041.{SECRETS['--set by shape']}",
]

RECIPE = f"""\
# a simulator recipe with a secret in every channel
config_key: it-secrets
image: lmsysorg/sglang:v0.5.23-cu130
engine: sim
sim_profile: demo
model: {{path: demo/agentic-coder-8b, served_name: agentic-coder}}
hardware: {{gpu: sim, gpus_per_node: 1}}
server:
  ready_timeout_s: 60
  args:
    max-running-requests: 32
    stream-interval: 1
    enable-metrics: true
    enable-cache-report: true
    api-key: {SECRETS['recipe server.args api-key']}
  env:
    HF_TOKEN: {SECRETS['recipe server.env HF_TOKEN']}
    WANDB_API_KEY: {SECRETS['recipe server.env WANDB_API_KEY']}
    MY_DB_PASSWD: {SECRETS['recipe server.env MY_DB_PASSWD']}
    GITHUB_PAT: {SECRETS['recipe server.env GITHUB_PAT']}
    SGLANG_MAX_TOKENS: "4096"
    SGLANG_REMOTE_STORE_URL: "https://bench:{SECRETS['recipe server.env URL password']}@store.example/c?\
token={SECRETS['recipe server.env URL ?token=']}&region=us"
    OPENAI_APIKEY: {SECRETS['recipe server.env OPENAI_APIKEY']}
    AUTH_HEADER: "Bearer {SECRETS['recipe server.env AUTH_HEADER Bearer']}"
    PRIVATE_KEY_PEM: "{_pem(SECRETS['recipe server.env PRIVATE_KEY_PEM'])}"
    SGLANG_CREDENTIALS: {SECRETS['recipe server.env SGLANG_CREDENTIALS']}
    PASSPHRASE: {SECRETS['recipe server.env PASSPHRASE']}
    NOTIFY_WEBHOOK: "https://hooks.example/notify?access_token={SECRETS['recipe server.env webhook ?access_token=']}"
    EXTRA_HEADERS: "Authorization: Bearer {SECRETS['recipe server.env Bearer by shape']}"
    TLS_BUNDLE: "{_pem(SECRETS['recipe server.env PEM by shape'])}"
    MY_ODD_SETTING: {SECRETS['recipe secret_names MY_ODD_SETTING']}
    GCP_REF: "ya29.{SECRETS['Google OAuth ya29.']}"
    VAULT_REF: "hvs.{SECRETS['Vault hvs.']}"
    DATABRICKS_REF: "dapi{SECRETS['Databricks dapi']}"
    MAIL_REF: "SG.PlantedSgId0025xx.{SECRETS['SendGrid SG.']}"
    TWILIO_REF: "AC0123456789abcdef0123456789abcdef:{SECRETS['Twilio auth token after SID']}"
    TWILIO_KEY_REF: "SK{SECRETS['Twilio SK key']}"
    DO_REF: "dop_v1_{SECRETS['DigitalOcean dop_v1_']}"
    SHOP_REF: "shpat_{SECRETS['Shopify shpat_']}"
    HF_ORG_REF: "api_org_{SECRETS['Hugging Face api_org_']}"
    TELEGRAM_URL: "https://api.telegram.org/bot123456789:AA{SECRETS['Telegram bot token']}/getMe"
    AGE_REF: "AGE-SECRET-KEY-1{SECRETS['age secret key']}"
    ODBC_DSN: "Driver={{ODBC Driver 18}};Server=db;Uid=bench;Pwd={SECRETS['ODBC Pwd=']};Encrypt=yes"
    NETRC_LINE: "machine api.example.com login bench password {SECRETS['netrc password']}"
    DB_SETUP: "mysql -h db -u root -p{SECRETS['mysql -p']} bench"
    DRF_HEADER: "Authorization: Token {SECRETS['Authorization: Token']}"
    VENDOR_HEADER: "X-Api-Key: {SECRETS['X-Api-Key header']}"
    DOCKER_CONFIG_JSON: '{{"auths": {{"registry.example": {{"auth": "{SECRETS['docker config auth']}"}}}}}}'
    AZURE_BLOB_QS: "sig={SECRETS['Azure SAS sig=']}&sv=2022-11-02&se=2030-01-01"
    VENDOR_OPTS: "--vendor-apitoken {SECRETS['random token after a credential-like name']}"
client:
  traces: {ROOT / 'recipes' / 'traces' / 'quickstart'}
  duration_s: 20
  grace_s: 2
  warmup_requests_per_lane: 1     # what is tested is where the secrets go, not the window
  unofficial: true
points:
  c4:
    env:
      POINT_ACCESS_TOKEN: {SECRETS['recipe point env']}
secret_names: [MY_ODD_SETTING]
"""


def write_recipe(directory: Path) -> Path:
    path = directory / "it-secrets.yaml"
    path.write_text(RECIPE)
    return path


def write_profile(directory: Path) -> Path:
    """The local CI cluster profile, declaring one more secret name."""
    path = directory / "local-ci-secrets.yaml"
    text = (ROOT / "clusters" / "local-ci.yaml").read_text()
    path.write_text(text + f"secret_names: [{PROFILE_SECRET_NAME}]\n")
    return path


def set_args() -> list[str]:
    return [a for o in OVERRIDES for a in ("--set", o)]


def leaks(directory: Path, extra: dict[str, str] | None = None) -> list[str]:
    """`file: channel` for every planted secret (and `extra` ones) found in any file or in any file's or
    directory's name under `directory` (hidden ones too)."""
    found = []
    files = [p for p in directory.rglob("*") if p.is_file() and not p.is_symlink()]
    assert files, f"no files under {directory}"
    found += [f"name {p.relative_to(directory)}: {channel}" for p in directory.rglob("*")
              for channel, value in {**SECRETS, **(extra or {})}.items() if value[:12] in p.name]
    for path in files:
        data = path.read_bytes()
        found += [f"{path.relative_to(directory)}: {channel}" for channel, value in {**SECRETS, **(extra or {})}.items()
                  if value.encode() in data]
    return found


def text_leaks(what: str, text: str, extra: dict[str, str] | None = None) -> list[str]:
    return [f"{what}: {channel}" for channel, value in {**SECRETS, **(extra or {})}.items() if value in text]
