// Code a TypeScript client writes against the types openapi-typescript generates from
// openapi/openapi.json: app/tests/generated_clients.rs generates them as `tessera.ts` beside a
// copy of this file and type-checks both with `tsc --strict`.
import type { components, operations, paths } from "./tessera";

type Schemas = components["schemas"];
type Json<R> = R extends { content: { "application/json; charset=utf-8": infer B } } ? B : never;

// A gift card booking: the request body, the card answered, the field errors of a 409.
type Transact = operations["organizers_giftcards_transact_create"];
const debit: Transact["requestBody"]["content"]["application/json"] = { value: "-5.00", text: "coffee" };
const card: Json<Transact["responses"][200]> = {
  id: 1,
  secret: "GIFT-1",
  issuance: "2030-01-01T00:00:00Z",
  value: "20.00",
  currency: "EUR",
  testmode: false,
  issuer: "acme",
};
const overdraft: Schemas["FieldErrors"] = { value: ["The gift card does not have sufficient credit."] };

// An event, its multi-language name and its currency.
const event: Schemas["EventCreate"] = {
  name: { en: "Summit", de: "Gipfel" },
  slug: "summit",
  currency: "EUR",
  date_from: "2030-06-01T09:00:00Z",
};

// An item with variations, and what a quota has left.
const item: Schemas["ItemCreate"] = {
  name: { en: "Ticket" },
  default_price: "99.00",
  variations: [{ value: { en: "Regular" } }, { value: { en: "Student" }, default_price: "49.00" }],
};
type Availability = Json<
  paths["/api/v1/organizers/{organizer}/events/{event}/quotas/{id}/availability/"]["get"]["responses"][200]
>;
function left(a: Availability): number | null | undefined {
  return a.available ? a.available_number : 0;
}

// A voucher, an order with one, and a waiting list entry.
const voucher: Schemas["VoucherCreate"] = { code: "SPEAKER-1", price_mode: "set", value: "0.00" };
const order: Schemas["OrderCreate"] = {
  email: "ada@example.org",
  positions: [{ item: 1, variation: 2, voucher: voucher.code }],
};
const entry: Schemas["EntryCreate"] = { email: "grace@example.org", item: 1 };

// The talk side: a submission's state.
const state: Schemas["TalkSubmissionState"] = "accepted";

export const examples = { debit, card, overdraft, event, item, left, order, entry, state };
