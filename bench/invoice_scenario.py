"""Seeds the invoice download benchmark on the check-in benchmark's event `benchdoor` (run
checkin_scenario.py first): the event issues invoices on request from a German issuer, one
order gets its invoice through the API (`create_invoice/`), and every other order of the
event gets a copy of that invoice under its own number, written straight into the database
(issuing tens of thousands through the API would take longer than the benchmark). Writes one
invoice number a line to NUMBERS_FILE and prints INVOICES_FILE= for bench/run.

usage: invoice_scenario.py BASE_URL TOKEN DATABASE_URL NUMBERS_FILE
"""

import json
import sqlite3
import subprocess
import sys
import urllib.request

base, token, database_url, numbers_file = sys.argv[1:5]
event = f"{base}/api/v1/organizers/bench/events/benchdoor"


def api(method, path, body):
    req = urllib.request.Request(
        f"{event}/{path}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)


# The seeded orders carry no total; an invoice needs one (ten euros a ticket).
totals = ("UPDATE orders SET total_cents = 1000 WHERE event_id = "
          "(SELECT id FROM events WHERE slug = 'benchdoor')")
if database_url.startswith("sqlite:"):
    with sqlite3.connect(database_url.split("://", 1)[-1].split("?", 1)[0], timeout=30) as db:
        db.execute(totals)
else:
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", database_url, "-c", totals],
                   check=True, stdout=subprocess.DEVNULL)

api("PATCH", "settings/", {
    "invoice_generate": "admin",
    "invoice_address_from_name": "Bench Events GmbH",
    "invoice_address_from": "Hauptstraße 1",
    "invoice_address_from_zipcode": "10115",
    "invoice_address_from_city": "Berlin",
    "invoice_address_from_country": "DE",
    "invoice_address_from_vat_id": "DE123456789",
    "invoice_introductory_text": "Thank you for your order.",
})
first = api("POST", "orders/D0000000/create_invoice/", {})
prefix = first["number"][:-5]

# Every column of the first invoice, but its id, order and number.
columns = [
    "organizer_id", "event_id", "prefix", "is_cancellation", "refers_id", "canceled", "date",
    "created", "locale", "currency", "invoice_from", "invoice_from_name",
    "invoice_from_zipcode", "invoice_from_city", "invoice_from_state", "invoice_from_country",
    "invoice_from_tax_id", "invoice_from_vat_id", "invoice_to", "invoice_to_is_business",
    "invoice_to_company", "invoice_to_name", "invoice_to_street", "invoice_to_zipcode",
    "invoice_to_city", "invoice_to_state", "invoice_to_country", "invoice_to_vat_id",
    "invoice_to_beneficiary", "internal_reference", "custom_field", "introductory_text",
    "additional_text", "payment_provider_text", "footer_text", "reverse_charge", "lines",
    "transmission_type", "transmission_provider", "transmission_status", "transmission_date",
    "transmission_info", "sent_to_organizer", "shredded", "version",
]
copied = ", ".join(f"t.{c}" for c in columns)
listed = ", ".join(columns)
number = "(row_number() OVER (ORDER BY o.id) + 1)"
select = (
    f"SELECT o.id, {{no}}, t.prefix || {{no}}, {copied} FROM orders o "
    f"JOIN invoices t ON t.full_invoice_no = '{first['number']}' AND o.event_id = t.event_id "
    f"WHERE o.id <> t.order_id"
)
insert = f"INSERT INTO invoices (order_id, invoice_no, full_invoice_no, {listed}) "
count = "(SELECT count(*) FROM invoices i JOIN events e ON e.id = i.event_id WHERE e.slug = 'benchdoor')"
counter = (f"UPDATE invoice_counters SET last = {count} WHERE prefix = '{prefix}'")
numbers_query = ("SELECT i.full_invoice_no FROM invoices i JOIN events e ON e.id = i.event_id "
                 "WHERE e.slug = 'benchdoor' ORDER BY i.id")

if database_url.startswith("sqlite:"):
    path = database_url.split("://", 1)[-1].split("?", 1)[0]
    db = sqlite3.connect(path, timeout=30)
    no = f"substr('00000' || {number}, -5, 5)"
    db.execute(insert + select.format(no=no))
    db.execute(counter)
    db.commit()
    db.execute("ANALYZE")
    numbers = [r[0] for r in db.execute(numbers_query)]
    db.close()
else:
    no = f"lpad({number}::text, 5, '0')"
    sql = f"BEGIN; {insert}{select.format(no=no)}; {counter}; COMMIT; ANALYZE invoices;"
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", database_url], check=True,
                   input=sql.encode(), stdout=subprocess.DEVNULL)
    listed_numbers = subprocess.run(["psql", "-qAt", "-v", "ON_ERROR_STOP=1", database_url,
                                     "-c", numbers_query], check=True, capture_output=True)
    numbers = listed_numbers.stdout.decode().split()

with open(numbers_file, "w") as f:
    f.write("\n".join(numbers) + "\n")
print(f"INVOICES_FILE={numbers_file}")
