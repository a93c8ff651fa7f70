#!/usr/bin/env python3
"""Seed a conference for the talk-side benchmark through the talk-side API (/api/).

usage: talk_scenario.py BASE_URL USER_TOKEN EVENT_SLUG [TALKS] [ROOMS]

The event must have the talk side on, dates over three days, and the token must be a
read-write user token of an organiser of its call for papers. Creates a session type, two
tracks, ROOMS rooms (10) and TALKS sessions (300) with one speaker each, accepts and
confirms them, places them in the rooms (ten a day per room, 30 minutes each), and releases
the schedule as version 1.0. Prints TALK_EVENT= and TALKS= when done.
"""
import http.client
import json
import sys
import urllib.parse

base, token, event = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
talks = int(sys.argv[4]) if len(sys.argv) > 4 else 300
room_count = int(sys.argv[5]) if len(sys.argv) > 5 else 10
url = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)
api = f"/api/events/{event}"


def call(method, path, body=None, expect=(200, 201)):
    conn.request(method, api + path,
                 body=None if body is None else json.dumps(body),
                 headers={"Authorization": "Token " + token,
                          "Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    if resp.status not in expect:
        sys.exit(f"# {method} {path}: {resp.status} {raw[:300]!r}")
    return json.loads(raw) if raw else None


kind = call("POST", "/submission-types/",
            {"name": {"en": "Talk", "de": "Vortrag"}, "default_duration": 30})["id"]
tracks = [call("POST", "/tracks/", {"name": {"en": name}, "color": color})["id"]
          for name, color in [("Systems", "#1f6feb"), ("People", "#d29922")]]
rooms = [call("POST", "/rooms/", {"name": {"en": f"Room {i + 1}", "de": f"Saal {i + 1}"},
                                  "capacity": 100 + 10 * i, "position": i})["id"]
         for i in range(room_count)]
codes = []
for i in range(talks):
    s = call("POST", "/submissions/", {
        "title": f"Session {i + 1}: what we learnt running conference software",
        "submission_type": kind, "track": tracks[i % 2],
        "abstract": "How a program of three hundred sessions reaches every attendee's phone "
                    "at once, and what breaks first.",
        "description": "We look at caches, entity tags and the schedule formats conference "
                       "apps read, with figures from a real event. " * 3,
    })
    code = s["code"]
    call("POST", f"/submissions/{code}/add-speaker/",
         {"email": f"speaker{i + 1}@example.org", "name": f"Speaker {i + 1}"})
    call("POST", f"/submissions/{code}/accept/", {})
    call("POST", f"/submissions/{code}/confirm/", {})
    codes.append(code)
slots = {s["submission"]: s["id"]
         for s in call("GET", "/schedules/wip/?expand=slots")["slots"]}
per_day = 10
for i, code in enumerate(codes):
    room, n = i % room_count, i // room_count
    day, k = n // per_day, n % per_day
    start = f"2027-09-0{day + 1}T{8 + k:02d}:00:00Z"
    call("PATCH", f"/slots/{slots[code]}/", {"room": rooms[room], "start": start})
call("POST", "/schedules/release/", {"version": "1.0"})
print(f"TALK_EVENT={event}")
print(f"TALKS={len(codes)}")
