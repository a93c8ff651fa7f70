"""Seeds the shop benchmark as pretix's was measured (../shared/bench/BASELINE.md, "The shop"):
the scenario's 30 products, 10 with two variations, on a live event `benchshop` of the
organizer `bench` that sells by bank transfer. Prints SHOP_ITEM= (a ticket without variations,
which the checkout workload buys), SHOP_QUOTA= and SHOP_EVENT= for bench/run.

usage: shop_scenario.py BASE_URL TOKEN
"""

import json
import sys
import urllib.request

base, token = sys.argv[1].rstrip("/"), sys.argv[2]
events = f"{base}/api/v1/organizers/bench/events/"


def call(method, url, body):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)


call("POST", events, {"name": {"en": "Bench Shop"}, "slug": "benchshop", "currency": "EUR",
                      "date_from": "2027-06-01T09:00:00Z", "date_to": "2027-06-02T18:00:00Z",
                      "plugins": ["banktransfer"]})
shop = f"{events}benchshop/"
items = []
for i in range(30):
    items.append(call("POST", f"{shop}items/", {
        "name": {"en": f"Ticket {i}", "de": f"Karte {i}"}, "default_price": "23.00",
        "active": True, "admission": True, "position": i,
        "description": {"en": "A ticket with a **Markdown** description."},
        "variations": [{"value": {"en": "Regular"}, "default_price": "23.00", "active": True},
                       {"value": {"en": "Reduced"}, "default_price": "12.00", "active": True}]
        if i % 3 == 0 else [],
    }))
quota = call("POST", f"{shop}quotas/", {"name": "All", "size": 1000000,
                                "items": [it["id"] for it in items],
                                "variations": [v["id"] for it in items for v in it["variations"]]})
call("PATCH", f"{shop}settings/", {"banktransfer_iban": "DE89 3704 0044 0532 0130 00"})
call("PATCH", shop, {"live": True})
print(f"SHOP_ITEM={items[1]['id']}")
print(f"SHOP_QUOTA={quota['id']}")
print("SHOP_EVENT=benchshop")
