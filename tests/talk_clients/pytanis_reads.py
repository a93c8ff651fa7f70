"""Reads a conference through pytanis' PretalxClient as its users do, and prints a JSON report.

Run by tests/tests/talk_clients.rs with the Python of the talk clients' environment (made by
.ci/setup). Everything goes through pytanis' public methods with their defaults (its
expansions, the `Pretalx-Version` header of its configuration); only the throttle is
raised, since pytanis waits half a second between calls by default.

Arguments: the base URL, the event's slug, a token, and the resources to read
(comma-separated: submissions, talks, speakers, reviews, rooms, tags, tracks,
submission_types, questions, answers).

pytanis swallows what its models refuse: a list drops the item and logs an error, a single
read logs an error and gives None. Every log entry at warning or above is therefore part of
the report, and so is every exception, each with the step it happened in.
"""

import json
import os
import sys
import tempfile

import httpx
from structlog.testing import capture_logs

from pytanis import PretalxClient
from pytanis.config import get_cfg
from pytanis.pretalx.utils import get_talks_as_json

# Each list resource: pytanis' list method, its single-read method, and the key that names
# an item in the single read.
RESOURCES = {
    "submissions": ("submissions", "submission", "code"),
    "talks": ("talks", None, "code"),
    "speakers": ("speakers", "speaker", "code"),
    "reviews": ("reviews", "review", "id"),
    "rooms": ("rooms", "room", "id"),
    "tags": ("tags", "tag", "id"),
    "tracks": ("tracks", "track", "id"),
    "submission_types": ("submission_types", "submission_type", "id"),
    "questions": ("questions", "question", "id"),
    "answers": ("answers", "answer", "id"),
}


def dump(model):
    return None if model is None else model.model_dump(mode="json", by_alias=False)


def failure(step, exc):
    entry = {"step": step, "error": f"{type(exc).__name__}: {exc}"}
    if isinstance(exc, httpx.HTTPStatusError):
        entry["status"] = exc.response.status_code
        entry["url"] = str(exc.request.url)
        entry["body"] = exc.response.text[:2000]
    return entry


def main():
    base, event, token, wanted = sys.argv[1:5]
    wanted = [r for r in wanted.split(",") if r]
    unknown = [r for r in wanted if r not in RESOURCES]
    if unknown:
        sys.exit(f"unknown resources: {unknown}")
    report = {"errors": [], "log": [], "resources": {}, "single": {}}
    with tempfile.TemporaryDirectory() as home:
        config = os.path.join(home, "config.toml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(
                "[Pretalx]\n"
                f"api_token = {json.dumps(token)}\n"
                f"api_base_url = {json.dumps(base)}\n"
                'api_version = "v1"\n'
                "timeout = 30\n"
            )
        os.environ["PYTANIS_CONFIG"] = config
        with capture_logs() as logs:
            client = PretalxClient(get_cfg(), blocking=True)
            client.set_throttling(1000, 1)
            read(client, event, wanted, report)
    report["log"] = [
        {k: str(v) for k, v in entry.items()}
        for entry in logs
        if entry.get("log_level") in ("warning", "error", "critical", "exception")
    ]
    json.dump(report, sys.stdout)


def read(client, event, wanted, report):
    try:
        count, events = client.events()
        events = list(events)
        report["events"] = {"count": count, "items": [dump(e) for e in events]}
    except Exception as exc:  # noqa: BLE001 -- every failure goes into the report
        report["errors"].append(failure("events", exc))
    try:
        report["event"] = dump(client.event(event))
    except Exception as exc:  # noqa: BLE001
        report["errors"].append(failure("event", exc))
    for name in wanted:
        many, one, key = RESOURCES[name]
        try:
            count, items = getattr(client, many)(event)
            items = list(items)
        except Exception as exc:  # noqa: BLE001
            report["errors"].append(failure(name, exc))
            continue
        report["resources"][name] = {"count": count, "items": [dump(i) for i in items]}
        if one is None or not items:
            continue
        # The first item again, read alone: it must equal the list's.
        first = getattr(items[0], key)
        try:
            alone = getattr(client, one)(event, first)
            report["single"][name] = {"key": first, "equal": alone == items[0], "item": dump(alone)}
        except Exception as exc:  # noqa: BLE001
            report["errors"].append(failure(f"{one}({first})", exc))
    if "talks" in wanted:
        # pytanis' export of the confirmed talks: `talks/?questions=all&state=confirmed`,
        # which falls back to `submissions/`, then each speaker read alone.
        try:
            report["confirmed_talks"] = json.loads(get_talks_as_json(client, event, "confirmed"))
        except Exception as exc:  # noqa: BLE001
            report["errors"].append(failure("get_talks_as_json", exc))


if __name__ == "__main__":
    main()
