"""Runs pretix-banktool, unchanged, with its bank connection replaced by a fixed statement.

usage: python upload.py STATEMENT.json pretix-banktool ARGS...

The tool's own command line runs (configuration checks, its parsing of the statement into
its upload, the `--ignore` filter, the POST to `bankimportjobs/` and its exit codes); only
`FinTS3PinTanClient`, the online banking connection, is replaced by one that lists the
account of the configuration and answers the statement of STATEMENT.json: a list of
transactions as python-fints gives them (`amount` as a decimal string, negative for a debit,
and the text fields `purpose`, `posting_text`, `applicant_name`, `applicant_iban`,
`end_to_end_reference`, `bank_reference`), all booked today.
"""

import configparser
import datetime
import json
import sys
import types

import mt940.models
import pretix_banktool.upload as upload
from pretix_banktool.main import main


def statement(path):
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    today = datetime.date.today()
    out = []
    for row in rows:
        data = dict(row)
        amount = data.pop("amount")
        status = "D" if amount.startswith("-") else "C"
        data["amount"] = mt940.models.Amount(amount.lstrip("-"), status, "EUR")
        data["date"] = today
        out.append(types.SimpleNamespace(data=data))
    return out


def fake_bank(iban, transactions):
    class Bank:
        def __init__(self, *args, **kwargs):
            self.init_tan_response = None
            self.selected_tan_medium = None

        def get_current_tan_mechanism(self):
            return "942"

        def is_tan_media_required(self):
            return False

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def get_sepa_accounts(self):
            return [types.SimpleNamespace(iban=iban)]

        def get_transactions(self, account, start, end, include_pending=False):
            return transactions

    return Bank


if __name__ == "__main__":
    statement_file, args = sys.argv[1], sys.argv[2:]
    config = configparser.ConfigParser()
    config.read(args[2])
    upload.FinTS3PinTanClient = fake_bank(config["fints"]["iban"], statement(statement_file))
    sys.argv = args
    main()
