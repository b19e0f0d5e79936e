"""Secrets by value shape: each planted shape vanishes from text, argv, data, every writer and `harness plan`,
whatever it is called; package requirements and ordinary words that look alike are kept."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.point.state.variant import derived_name, secret_mark
from harness.redact import REDACTED, forget_all, redact_argv, redact_data, redact_text

ROOT = Path(__file__).resolve().parents[2]

# (what is written, the secret part that must vanish)
SHAPES = [
    ("DB_PWD=hunter2pw", "hunter2pw"),
    ("DB_PWD2=v", "=v"),
    ("ADMIN_PW=s3cr3tpw", "s3cr3tpw"),
    ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    ("curl -u admin:curlpw42 https://example.com", "curlpw42"),
    ("curl --user=admin:curlpw43 https://example.com", "curlpw43"),
    ("https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=f00dfeed1234", "f00dfeed1234"),
    ("https://b.s3.amazonaws.com/o?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101", "IOSFODNN7EXAMPLE"),
    ("https://storage.googleapis.com/b/o?X-Goog-Signature=beefcafe5678", "beefcafe5678"),
    ("https://hooks.slack.com/services/T0HOOK01/B0HOOK02/hookhookhookhook", "hookhookhookhook"),
    ("MODEL_REF=hf_AbCdEfGhIjKlMnOpQrStUvWx12", "hf_AbCdEfGhIjKlMnOpQrStUvWx12"),
    ("REPO=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "ghp_AbCdEfGhIjKlMnOpQrStUv"),
    ("x gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 y", "gho_AbCdEfGhIjKlMnOpQrStUv"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG"),
    ("note: glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    ("OPENAI=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("use sk-ant-api03-AbCdEfGhIjKlMnOpQrSt", "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt"),
    ("stripe sk_live_AbCdEfGhIjKlMnOpQr", "sk_live_AbCdEfGhIjKlMnOpQr"),
    ("AWS_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("temp ASIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE"),
    ("maps AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYz0123456", "AIzaSyAbCdEfGhIjKlMnOp"),
    ("SLACK=xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"),
    ("slack xoxp-123456789012-abcdefABCDEF", "xoxp-123456789012-abcdefABCDEF"),
    ("npm npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrSt"),
    ("JWT=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX3g", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("upload pypi-AgEIcHlwaS5vcmcCJDAbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdef", "AgEIcHlwaS5vcmcCJDAb"),
    ("Authorization: Bearer abcdefgh12345", "abcdefgh12345"),
    # service tokens, secrets by syntax, random-looking values after token-like names (harness.redact_forms)
    ("GCP_ACCESS=ya29.a0AfH6SMBplantedOAuthTok3n_x1", "a0AfH6SMBplantedOAuthTok3n"),
    ("vault hvs.CAESIPlantedVaultTok3nAbCdEf12", "CAESIPlantedVaultTok3n"),
    ("DATABRICKS_HOST_REF=dapi0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
    ("mail SG.PlantedSgId012345.PlantedSgSecret0123456789abcdefXYZ", "PlantedSgSecret0123456789"),
    ("twilio AC0123456789abcdef0123456789abcdef:fedcba9876543210fedcba9876543210", "fedcba9876543210fedcba98"),
    ("twilio key SK0123456789abcdef0123456789abcdef", "SK0123456789abcdef0123456789abcdef"),
    ("DO=dop_v1_" + "ab12" * 16, "ab12ab12ab12ab12ab12ab12"),
    ("shop shpat_0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
    ("org api_org_PlantedHfOrgToken0123456789", "PlantedHfOrgToken0123456789"),
    ("https://api.telegram.org/bot123456789:AAPlantedTelegramBotToken_0123456789/getMe",
     "PlantedTelegramBotToken_0123456789"),
    ("AGE-SECRET-KEY-1PLANTEDAGEKEY0123456789QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ", "PLANTEDAGEKEY0123456789"),
    ("Driver={ODBC Driver 18};Server=db;Uid=bench;Pwd=PlantedOdbcPw9;Encrypt=yes", "PlantedOdbcPw9"),
    ("machine api.example.com login bench password PlantedNetrcPw7", "PlantedNetrcPw7"),
    ("mysql -h db -u root -pPlantedMysqlPw5 bench", "PlantedMysqlPw5"),
    ("curl -H Authorization: Token PlantedDrfToken3 https://api.example.com", "PlantedDrfToken3"),
    ("curl -H X-Api-Key: PlantedXApiKey4 https://api.example.com", "PlantedXApiKey4"),
    ('{"auths": {"registry.example": {"auth": "YmVuY2g6UGxhbnRlZERvY2tlclB3Ng=="}}}', "YmVuY2g6UGxhbnRlZERvY2tlclB3Ng"),
    ("AZURE_SAS=sig=PlantedSasSig0123%2Bab%3D&sv=2022-11-02&se=2030-01-01", "PlantedSasSig0123"),
    ("SERVICE_CREDENTIAL: Q29kZVBsYW50ZWQxMjM0NTY3ODkw", "Q29kZVBsYW50ZWQxMjM0NTY3ODkw"),
    ("--vendor-apitoken PlantedGeneric9Tok3nValue0", "PlantedGeneric9Tok3nValue0"),
]

KEPT = ["tiktoken==0.14.0", "asttokens==2.4.1", "tokenizers==0.20.3", "keyring==25.0", "docker run -u 1000:1000 img",
        "Basic configuration", "PWD=/home/user", "sk-learn", "MAX_TOKENS=4096", "OLDPWD=/tmp",
        "--max-running-requests=8", "model: Qwen/Qwen3-8B-Instruct", "sha256: " + "ab12" * 16,
        "recipe_fingerprint: 0123456789abcdef0123456789abcdef", '"session_id": "3f2a9c1e7b4d5a6f8e9d0c1b"',
        "X-Request-Id: 0123456789abcdef0123", "--model-path /models/ab12cd34ef56gh78ij90", "mysql -p bench",
        "eos_token: </s>", "Token usage: 123", "password required", "config_key: dsr1-fp8-h200-sglang"]


@pytest.fixture(autouse=True)
def _clean() -> None:
    forget_all()


def test_the_table_has_at_least_twenty_shapes() -> None:
    assert len(SHAPES) >= 20


@pytest.mark.parametrize(("text", "secret"), SHAPES)
def test_a_shape_vanishes_from_text_argv_and_data(text: str, secret: str) -> None:
    assert secret in text
    assert secret not in redact_text(text) and REDACTED in redact_text(text)
    assert secret not in " ".join(redact_argv(text.split(" ")))
    data = {"notes": text, "sbatch_directives": [f"--comment={text}"], "argv": ["serve", text]}
    assert secret not in json.dumps(redact_data(data))


@pytest.mark.parametrize("text", KEPT)
def test_lookalikes_are_kept(text: str) -> None:
    assert redact_text(text) == text
    assert redact_argv(text.split(" ")) == text.split(" ")
    assert redact_data({"packages": [text, "numpy==2.0.0"]}) == {"packages": [text, "numpy==2.0.0"]}


def test_a_pip_freeze_listing_is_kept_whole() -> None:
    listing = ["asttokens==2.4.1", "tiktoken==0.14.0", "tokenizers==0.20.3", "python-dotenv==1.0.1",
               "sglang @ file:///opt/sglang/python"]
    assert redact_data({"packages": listing}) == {"packages": listing}


@pytest.mark.parametrize(("override", "name"), [
    ("server.env.DB_PWD2=v", "DB_PWD2"),
    ("server.env.HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWx12", "HF_TOKEN"),
    ("server.env.MODEL_REF=hf_AbCdEfGhIjKlMnOpQrStUvWx12", "MODEL_REF"),
    ("args.api-key=plainvalue", "api-key"),
    ("server.env.NOTIFY=SG.PlantedSgId012345.PlantedSgSecret0123456789abcdefXYZ", "NOTIFY"),
])
def test_a_secret_override_names_its_variant_by_key_and_a_mark(override: str, name: str) -> None:
    value = override.partition("=")[2]
    assert derived_name([override]) == f"{name}={secret_mark(value)}"
    assert re.fullmatch(r"redacted-[0-9a-f]{8}", secret_mark(value))
    both = derived_name(["args.max-running-requests=64", override])
    assert both == f"max-running-requests=64,{name}={secret_mark(value)}"
    assert value not in both and value[:6] not in both
    assert redact_data({"variant": both}) == {"variant": both}   # the record and the directory agree
    assert redact_text(f"variants/{both}/conc4") == f"variants/{both}/conc4"


def test_two_secrets_name_two_variants() -> None:
    one = derived_name(["server.env.HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWx12"])
    two = derived_name(["server.env.HF_TOKEN=hf_ZyXwVuTsRqPoNmLkJiHgFeDc34"])
    assert one != two and one.startswith("HF_TOKEN=redacted-") and two.startswith("HF_TOKEN=redacted-")


def test_no_shape_reaches_harness_plan_output(capsys: pytest.CaptureFixture[str]) -> None:
    from harness import cli

    sets: list[str] = []
    for i, (text, _) in enumerate(SHAPES):
        sets += ["--set", f"server.env.NEUTRAL_{i}={text}"]
    for as_json in (["--json"], []):
        code = cli.main(["plan", str(ROOT / "recipes" / "quickstart-sim.yaml"), "--point", "c4", *as_json, *sets])
        out = capsys.readouterr()
        assert code == 0, out.err
        for _, secret in SHAPES:
            assert secret not in out.out + out.err, (secret, as_json)


def test_a_secret_shaped_sbatch_directive_stays_out_of_records_and_printed_commands(tmp_path: Path) -> None:
    import shlex

    from harness.artifacts import write_json

    token = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    argv = ["sbatch", "--parsable", f"--comment=deploy {token}", "--account=proj", "job.sh"]
    assert token not in redact_text(shlex.join(argv))          # what `submit` prints
    write_json(tmp_path / "jobs.json", {"sbatch": argv, "profile": {"sbatch_directives": argv[2:4]}})
    text = (tmp_path / "jobs.json").read_text()
    assert token not in text and "--account=proj" in text       # the job record and the plan


JWK_D = "Zx9QmV3kLp7RtY2wNc8BfHs4JdGa6EuK1oXi5Tq0aBc"          # 43 base64url characters
AWS_STYLE = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"           # 40 base64 characters, no long run
COMMIT = "9fceb02d0ae598e95dc970b74767f19372d61af8"

# free text only (a JSON document, a header, a config line): (what is written, the secret part that must vanish)
FREE_TEXT_SHAPES = [
    ('{"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "d": "' + JWK_D + '"}', JWK_D),
    ('{"d": "' + JWK_D + '"}', JWK_D),
    ('{"keys": [{"kty": "RSA", "n": "0vx7ago", "e": "AQAB", "p": "PlantedJwkPrime0123456789abcdef",'
     ' "q": "PlantedJwkPrimeQ0123456789", "dp": "PlantedJwkDp0123456789ab", "dq": "PlantedJwkDq0123456789ab",'
     ' "qi": "PlantedJwkQi0123456789ab"}]}', "PlantedJwk"),
    ('"jwk": "{\\"kty\\": \\"oct\\", \\"k\\": \\"PlantedOctKey0123456789ab\\"}"', "PlantedOctKey"),
    ('Authorization: Digest username="bench", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/v1",'
     ' qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1"',
     "6629fae49393a05397450978507c4ef1"),
    ('Authorization: Digest username="bench", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", response="6629fae4"',
     "dcd98b7102dd2f0e8b11d0f600bfb0c093"),
    (f"secret = {AWS_STYLE[:10]}Q1{AWS_STYLE[12:]}", "K7MDENG/bPxRfiCYEXAMPLE"),
    (f'api_token = "{JWK_D[:40]}"', JWK_D[:40]),
    (f"credentials => {JWK_D[:40]}", JWK_D[:40]),
    (f"secret := {JWK_D[:40]}", JWK_D[:40]),
    (f"vendorCredential: {AWS_STYLE}", AWS_STYLE),
]

FREE_TEXT_KEPT = [
    f"commit = {COMMIT}", f"git_commit: {COMMIT}", f"sha = {COMMIT}", f"revision => {COMMIT}",
    f"HARNESS_GIT_COMMIT={COMMIT}", f'"git_commit": "{COMMIT}"', f"commit_sha := {COMMIT}",
    '{"kty": "RSA", "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECP", '
    '"e": "AQAB"}',                                               # a public key
    '{"id": "' + JWK_D + '"}', '{"d": 3}', '{"p": "' + JWK_D + '"}',   # not a JWK's member without its "kty"
    'WWW-Authenticate: Digest realm="api"', "sha256 digest of the file", "token = 4096",
    f"model_path = /models/{COMMIT}", "vendorCredential: meta-llama/Llama-3.1-8B-Instruct-FP8-dynamic",
]


@pytest.mark.parametrize(("text", "secret"), FREE_TEXT_SHAPES)
def test_a_free_text_shape_vanishes(text: str, secret: str) -> None:
    assert secret in text
    assert secret not in redact_text(text) and REDACTED in redact_text(text)
    assert redact_text(redact_text(text)) == redact_text(text)
    assert secret not in json.dumps(redact_data({"notes": text}))


@pytest.mark.parametrize("text", FREE_TEXT_KEPT)
def test_free_text_lookalikes_are_kept(text: str) -> None:
    assert redact_text(text) == text
    assert redact_data({"notes": text}) == {"notes": text}


def test_a_digest_credential_keeps_its_parameter_names() -> None:
    header = 'Authorization: Digest username="bench", nonce="abc123", response="6629fae49393a05397450978507c4ef1"'
    assert redact_text(header) == 'Authorization: Digest username="bench", nonce="<redacted>", response="<redacted>"'
