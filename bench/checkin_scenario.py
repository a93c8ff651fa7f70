"""Seeds the check-in benchmark: an event `benchdoor` of organizer `bench` with a ticket, an
unlimited quota and a check-in list (through the API), then TICKETS paid orders of one
ticket each, written straight into the database (placing tens of thousands of orders
through the API would take longer than the benchmark). Writes one secret a line to
SECRETS_FILE and prints CHECKIN_LIST= and SECRETS_FILE= for bench/run.

usage: checkin_scenario.py BASE_URL TOKEN DATABASE_URL TICKETS SECRETS_FILE
"""

import json
import secrets
import sqlite3
import subprocess
import sys
import urllib.request

base, token, database_url, tickets, secrets_file = sys.argv[1:6]
tickets = int(tickets)
org = f"{base}/api/v1/organizers/bench"


def api(path, body):
    req = urllib.request.Request(
        f"{org}/{path}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)


api("events/", {"name": {"en": "Bench Door"}, "slug": "benchdoor", "currency": "EUR",
                        "date_from": "2027-09-01T07:00:00Z",
                        "plugins": ["pretix.plugins.ticketoutputpdf"]})
item = api("events/benchdoor/items/", {"name": {"en": "Ticket"}, "default_price": "10.00"})
api("events/benchdoor/quotas/", {"name": "Hall", "size": None, "items": [item["id"]]})
checkin_list = api("events/benchdoor/checkinlists/", {"name": "Entrance"})

codes = [f"D{i:07d}" for i in range(tickets)]
ticket_secrets = [secrets.token_hex(16) for _ in range(tickets)]
now = "2026-01-01T00:00:00+00:00"
item_id = item["id"]
# The event resource shows no ID: found by slug.
event_id = ("(SELECT e.id FROM events e JOIN organizers o ON o.id = e.organizer_id "
            "WHERE o.slug = 'bench' AND e.slug = 'benchdoor')")

if database_url.startswith("sqlite:"):
    path = database_url.split("://", 1)[-1].split("?", 1)[0]
    db = sqlite3.connect(path, timeout=30)
    db.executemany(
        f"INSERT INTO orders (event_id, code, status, datetime) VALUES ({event_id}, ?, 'p', ?)",
        [(c, now) for c in codes],
    )
    db.executemany(
        "INSERT INTO order_positions (order_id, positionid, item_id, price_cents, secret) "
        f"SELECT id, 1, ?, 1000, ? FROM orders WHERE event_id = {event_id} AND code = ?",
        [(item_id, s, c) for c, s in zip(codes, ticket_secrets)],
    )
    db.commit()
    db.execute("ANALYZE")
    position_ids = [r[0] for r in db.execute(
        f"SELECT p.id FROM order_positions p JOIN orders o ON o.id = p.order_id "
        f"WHERE o.event_id = {event_id} ORDER BY p.id")]
    db.close()
else:
    lines = ["BEGIN;"]
    for start in range(0, tickets, 1000):
        chunk = list(zip(codes, ticket_secrets))[start:start + 1000]
        values = ", ".join(f"({event_id}, '{c}', 'p', '{now}')" for c, _ in chunk)
        lines.append(f"INSERT INTO orders (event_id, code, status, datetime) VALUES {values};")
        pairs = ", ".join(f"('{c}', '{s}')" for c, s in chunk)
        lines.append(
            "INSERT INTO order_positions (order_id, positionid, item_id, price_cents, secret) "
            f"SELECT o.id, 1, {item_id}, 1000, v.s FROM (VALUES {pairs}) AS v(c, s) "
            f"JOIN orders o ON o.event_id = {event_id} AND o.code = v.c;"
        )
    lines.append("COMMIT;")
    lines.append("ANALYZE;")
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", database_url], check=True,
                   input="\n".join(lines).encode(), stdout=subprocess.DEVNULL)
    listed = subprocess.run(
        ["psql", "-qAt", "-v", "ON_ERROR_STOP=1", database_url, "-c",
         f"SELECT p.id FROM order_positions p JOIN orders o ON o.id = p.order_id "
         f"WHERE o.event_id = {event_id} ORDER BY p.id"],
        check=True, capture_output=True)
    position_ids = [int(line) for line in listed.stdout.decode().split()]

with open(secrets_file, "w") as f:
    f.write("\n".join(ticket_secrets) + "\n")
# The positions, for the ticket download workload (each downloaded once).
with open(f"{secrets_file}.positions", "w") as f:
    f.write("\n".join(map(str, position_ids)) + "\n")
print(f"CHECKIN_LIST={checkin_list['id']}")
print(f"SECRETS_FILE={secrets_file}")
print(f"POSITIONS_FILE={secrets_file}.positions")
