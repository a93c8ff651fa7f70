"""Reads a conference through pretalx-client's PretalxClient as its users do, and prints a
JSON report.

Run by tests/tests/talk_clients.rs with the Python of the talk clients' environment (made by
.ci/setup). Only the client's high-level methods are called, with their defaults: no
`Pretalx-Version` header, no `expand`, pages followed through `next` as given.

Arguments: the base URL, the event's slug, a token or "" for anonymous reads, and the
resources to read (comma-separated: rooms, submission_types, tracks, tags, speakers, talks,
submissions, slots).

pretalx-client parses leniently: when an answer lacks a field of pretalx's own schema it
logs "Failed to parse ... using fallback" and reads the dictionary instead. Such lines, and
every log line at warning or above, are part of the report, and so is every exception, each
with the step it happened in.
"""

import dataclasses
import json
import logging
import sys

from pretalx_client import PretalxClient

RESOURCES = ("rooms", "submission_types", "tracks", "tags", "speakers", "talks", "submissions", "slots")


class Recorder(logging.Handler):
    """Keeps the client's log lines that show a problem."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        message = record.getMessage()
        if record.levelno >= logging.WARNING or "Failed to parse" in message:
            self.lines.append({"level": record.levelname, "logger": record.name, "message": message})


def plain(value):
    """A dataclass as a dictionary of JSON values (datetimes as text)."""
    return json.loads(json.dumps(dataclasses.asdict(value), default=str))


def main():
    base, event, token, wanted = sys.argv[1:5]
    wanted = [r for r in wanted.split(",") if r]
    unknown = [r for r in wanted if r not in RESOURCES]
    if unknown:
        sys.exit(f"unknown resources: {unknown}")
    recorder = Recorder()
    logger = logging.getLogger("pretalx_client")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(recorder)
    report = {"errors": [], "log": [], "resources": {}}

    def step(name, call):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 -- every failure goes into the report
            report["errors"].append({"step": name, "error": f"{type(exc).__name__}: {exc}"})
            return None

    report["events"] = step("events", lambda: PretalxClient.fetch_events(base_url=base, api_token=token))
    client = PretalxClient(event, base_url=base, api_token=token)
    report["event"] = step("event", client.fetch_event)
    resources = report["resources"]
    # The ID-to-name maps, as an application builds them before reading the talks.
    maps = {}
    for name, call in (
        ("rooms", client.fetch_rooms),
        ("submission_types", client.fetch_submission_types),
        ("tracks", client.fetch_tracks),
        ("tags", client.fetch_tags),
    ):
        if name in wanted:
            found = step(name, call)
            if found is not None:
                maps[name] = found
                resources[name] = {str(k): v for k, v in found.items()}
    if "rooms" in wanted:
        resources["rooms_full"] = step("rooms_full", client.fetch_rooms_full)
    names = {
        "submission_types": maps.get("submission_types"),
        "tracks": maps.get("tracks"),
        "tags": maps.get("tags"),
        "rooms": maps.get("rooms"),
    }
    if "speakers" in wanted:
        found = step("speakers", client.fetch_speakers)
        if found is not None:
            resources["speakers"] = [plain(s) for s in found]
    if "talks" in wanted:
        # `talks/` (404 on pretalx's current API), then confirmed and accepted submissions.
        found = step("talks", lambda: client.fetch_talks(**names))
        if found is not None:
            resources["talks"] = [plain(t) for t in found]
    if "submissions" in wanted:
        found = step("submissions", lambda: client.fetch_submissions(**names))
        if found is not None:
            resources["submissions"] = [plain(t) for t in found]
        found = step("submissions_confirmed", lambda: client.fetch_submissions(state="confirmed", **names))
        if found is not None:
            resources["submissions_confirmed"] = [plain(t) for t in found]
    if "slots" in wanted:
        found = step("slots", lambda: client.fetch_schedule(rooms=maps.get("rooms")))
        if found is not None:
            resources["slots"] = [plain(s) for s in found]
    report["log"] = recorder.lines
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
