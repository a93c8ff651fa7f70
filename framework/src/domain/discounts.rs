//! How automatic discounts price a cart, as pretix 2026 does: the event's active discounts are
//! tried in order (position, then ID); each looks at the lines no earlier discount took, and
//! the lines it counts or discounts are taken. A discount needs either a number of matching
//! lines (then it may discount only the cheapest `n` of each group of `min_count`) or a gross
//! value of them; in a series it may count dates mixed, only the same date, or each line for a
//! different date. Bundled lines are never discounted.
//!
//! The same pricing serves the shop's cart, its checkout and orders placed through the API,
//! so that a buyer pays what the cart showed.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};

use crate::db::entities::discount;
use crate::values::stored;

pub mod manage;

/// `subevent_mode`: dates of a series can be mixed without limitation.
pub const MIXED: &str = "mixed";
/// `subevent_mode`: all matching products must be for the same date.
pub const SAME: &str = "same";
/// `subevent_mode`: each matching product must be for a different date.
pub const DISTINCT: &str = "distinct";

/// A line of a cart or an order, as discounts see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Line {
    /// The item.
    pub item_id: i64,
    /// The date of a series.
    pub subevent_id: Option<i64>,
    /// When that date begins.
    pub subevent_start: Option<DateTime<Utc>>,
    /// The line's gross price before discounts, in cents.
    pub price: i64,
    /// What the line is an add-on to: any key its base's other add-ons share.
    pub addon_to: Option<i64>,
    /// Whether it came bundled with its base (never discounted).
    pub is_bundled: bool,
    /// How much a voucher took off its listed price, in cents.
    pub voucher_discount: i64,
}

/// A line's price after discounts, and the discount that took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priced {
    /// The gross price in cents.
    pub price: i64,
    /// The discount that counted or discounted the line.
    pub discount: Option<i64>,
}

/// A discount with the lists it names read.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The stored discount.
    pub row: discount::Model,
    condition_items: HashSet<i64>,
    benefit_items: HashSet<i64>,
    channels: HashSet<String>,
}

impl From<discount::Model> for Rule {
    fn from(row: discount::Model) -> Self {
        let ids = |v| stored::id_list(v).into_iter().collect();
        Self {
            condition_items: ids(&row.condition_limit_products),
            benefit_items: ids(&row.benefit_limit_products),
            channels: stored::string_list(&row.limit_sales_channels)
                .into_iter()
                .collect(),
            row,
        }
    }
}

/// An event's discounts, in the order they are tried.
#[derive(Debug, Clone, Default)]
pub struct Discounts(Vec<Rule>);

impl Discounts {
    /// The event's discounts, sorted by position, then ID.
    pub fn new(rows: Vec<discount::Model>) -> Self {
        let mut rules: Vec<Rule> = rows.into_iter().map(Rule::from).collect();
        rules.sort_by_key(|r| (r.row.position, r.row.id));
        Self(rules)
    }

    /// Whether the event has a discount of this ID, active or not.
    pub fn has(&self, id: i64) -> bool {
        self.0.iter().any(|r| r.row.id == id)
    }

    /// Whether the event has no discount at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Prices `lines` sold on `channel` at `now`: each line's price after the discounts that
    /// apply, in the order given.
    pub fn apply(&self, channel: &str, now: DateTime<Utc>, lines: &[Line]) -> Vec<Priced> {
        let mut taken: BTreeMap<usize, Priced> = BTreeMap::new();
        for rule in self.0.iter().filter(|r| r.applies(channel, now)) {
            let open: Vec<usize> = (0..lines.len())
                .filter(|i| !lines[*i].is_bundled && !taken.contains_key(i))
                .collect();
            for (i, price) in rule.apply(lines, &open) {
                let discount = Some(rule.row.id);
                taken.insert(i, Priced { price, discount });
            }
        }
        (0..lines.len())
            .map(|i| {
                taken.get(&i).copied().unwrap_or(Priced {
                    price: lines[i].price,
                    discount: None,
                })
            })
            .collect()
    }
}

impl Rule {
    /// Whether the discount is active and available on `channel` at `now`.
    fn applies(&self, channel: &str, now: DateTime<Utc>) -> bool {
        let r = &self.row;
        r.active
            && r.available_from.is_none_or(|t| t <= now)
            && r.available_until.is_none_or(|t| t >= now)
            && (r.all_sales_channels || self.channels.contains(channel))
    }

    /// Whether a line counts towards the condition.
    fn counts(&self, l: &Line) -> bool {
        let r = &self.row;
        (r.condition_all_products || self.condition_items.contains(&l.item_id))
            && (r.condition_apply_to_addons || l.addon_to.is_none())
            && (!r.condition_ignore_voucher_discounted || l.voucher_discount == 0)
            && (l.subevent_id.is_none()
                || (r
                    .subevent_date_from
                    .is_none_or(|f| l.subevent_start >= Some(f))
                    && r.subevent_date_until
                        .is_none_or(|u| l.subevent_start <= Some(u))))
    }

    /// Whether a line may be discounted, when those are not the lines counted.
    fn benefits(&self, l: &Line) -> bool {
        let r = &self.row;
        self.benefit_items.contains(&l.item_id)
            && (r.benefit_apply_to_addons || l.addon_to.is_none())
            && (!r.benefit_ignore_voucher_discounted || l.voucher_discount == 0)
    }

    /// The lines of `open` this discount takes, with their new prices.
    fn apply(&self, lines: &[Line], open: &[usize]) -> BTreeMap<usize, i64> {
        let r = &self.row;
        let mut result = BTreeMap::new();
        let condition: Vec<usize> = open
            .iter()
            .copied()
            .filter(|i| self.counts(&lines[*i]))
            .collect();
        let benefit: Vec<usize> = match r.benefit_same_products {
            true => condition.clone(),
            false => open
                .iter()
                .copied()
                .filter(|i| self.benefits(&lines[*i]))
                .collect(),
        };
        let group = Group {
            rule: self,
            lines,
            addon_index: addon_indexes(lines, open),
        };
        match r.subevent_mode.as_str() {
            SAME => {
                let mut dates: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
                for &i in &condition {
                    dates
                        .entry(lines[i].subevent_id.unwrap_or(0))
                        .or_default()
                        .push(i);
                }
                for (date, counted) in dates {
                    let date = (date != 0).then_some(date);
                    let benefitting: Vec<usize> = benefit
                        .iter()
                        .copied()
                        .filter(|i| lines[*i].subevent_id == date)
                        .collect();
                    group.take(&counted, &benefitting, &mut result);
                }
            }
            DISTINCT => {
                let counted: HashSet<usize> = condition.iter().copied().collect();
                for g in group.distinct_dates(open, &counted) {
                    let g: Vec<usize> = g.into_iter().filter(|i| counted.contains(i)).collect();
                    group.take(&g, &g, &mut result);
                }
            }
            _ => group.take(&condition, &benefit, &mut result),
        }
        result
    }
}

/// A discount at work on one cart.
struct Group<'a> {
    rule: &'a Rule,
    lines: &'a [Line],
    /// Each open line's place among the open add-ons of its base (0 for a line without).
    addon_index: HashMap<usize, usize>,
}

/// How many open add-ons of the same base come before each open line, as pretix sorts equal
/// prices: so that "every tenth add-on free" discounts one in each base's ten.
fn addon_indexes(lines: &[Line], open: &[usize]) -> HashMap<usize, usize> {
    let mut seen: HashMap<i64, usize> = HashMap::new();
    open.iter()
        .map(|&i| {
            let n = match lines[i].addon_to {
                None => 0,
                Some(base) => {
                    let n = seen.entry(base).or_insert(0);
                    *n += 1;
                    *n - 1
                }
            };
            (i, n)
        })
        .collect()
}

impl Group<'_> {
    /// Applies the discount to one group of counted and benefitting lines.
    fn take(&self, counted: &[usize], benefitting: &[usize], result: &mut BTreeMap<usize, i64>) {
        let r = &self.rule.row;
        if r.condition_min_count > 0 {
            self.take_by_count(counted, benefitting, result);
        } else {
            let value: i64 = counted.iter().map(|i| self.lines[*i].price).sum();
            if value < r.condition_min_value_cents {
                return;
            }
            for &i in benefitting {
                result.insert(i, self.discounted(i));
            }
        }
    }

    /// A discount by count: with `benefit_only_apply_to_cheapest_n_matches`, the cheapest
    /// lines are split into groups of `min_count` and only `n` of each are discounted; the
    /// counted lines are taken at their price.
    fn take_by_count(
        &self,
        counted: &[usize],
        benefitting: &[usize],
        result: &mut BTreeMap<usize, i64>,
    ) {
        let r = &self.rule.row;
        let min = r.condition_min_count as usize;
        if counted.len() < min {
            return;
        }
        let (consumed, discounted) = match r.benefit_only_apply_to_cheapest_n_matches {
            Some(n) if n > 0 => {
                let n = n as usize;
                let mut counted = counted.to_vec();
                let mut benefitting = benefitting.to_vec();
                counted.sort_by(|a, b| self.cheapest_first(*a, *b));
                benefitting.sort_by(|a, b| self.cheapest_first(*a, *b));
                let groups = (counted.len() / min).min(benefitting.len().div_ceil(n));
                counted.truncate(groups * min);
                benefitting.truncate(groups * n);
                (counted, benefitting)
            }
            _ => (counted.to_vec(), benefitting.to_vec()),
        };
        for i in discounted {
            result.insert(i, self.discounted(i));
        }
        for i in consumed {
            result.entry(i).or_insert(self.lines[i].price);
        }
    }

    /// A line's price less the discount's percentage, rounded half away from zero.
    fn discounted(&self, i: usize) -> i64 {
        let keep = 10_000 - i128::from(self.rule.row.benefit_percent_bps);
        let scaled = i128::from(self.lines[i].price) * keep;
        let rounded = (scaled.abs() + 5_000) / 10_000 * scaled.signum();
        i64::try_from(rounded).unwrap_or(0)
    }

    /// A line's price, then its place among its base's add-ons.
    fn price_key(&self, i: usize) -> (i64, usize) {
        let place = self.addon_index.get(&i).copied().unwrap_or(0);
        (self.lines[i].price, place)
    }

    /// Cheapest first; among equal prices the earlier add-ons of a base first, then the
    /// later lines.
    fn cheapest_first(&self, a: usize, b: usize) -> Ordering {
        self.price_key(a).cmp(&self.price_key(b)).then(b.cmp(&a))
    }

    /// Groups of `min_count` lines each for a different date, as pretix builds them: the
    /// cheapest and dearest lines spread over the groups, then the lines left over added to
    /// groups that lack their date.
    fn distinct_dates(&self, open: &[usize], counted: &HashSet<usize>) -> Vec<Vec<usize>> {
        let r = &self.rule.row;
        let by_price = |a: &usize, b: &usize| self.price_key(*a).cmp(&self.price_key(*b));
        // Lines by date, in the order the dates first appear.
        let mut dates: Vec<(Option<i64>, Vec<usize>)> = Vec::new();
        for &i in open {
            let date = self.lines[i].subevent_id;
            match dates.iter_mut().find(|(d, _)| *d == date) {
                Some((_, v)) => v.push(i),
                None => dates.push((date, vec![i])),
            }
        }
        for (_, v) in dates.iter_mut() {
            v.sort_by(by_price);
        }
        let mut most_first: Vec<usize> = (0..dates.len()).collect();
        most_first.sort_by_key(|d| std::cmp::Reverse(dates[*d].1.len()));
        let cheap_picks = r
            .benefit_only_apply_to_cheapest_n_matches
            .unwrap_or(0)
            .max(0) as usize;
        let size = (r.condition_min_count.max(1)) as usize;
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        loop {
            let used: HashSet<Option<i64>> =
                current.iter().map(|i| self.lines[*i].subevent_id).collect();
            let mut candidates = Vec::new();
            let mut cardinality: Option<usize> = None;
            for (date, v) in &dates {
                let left: Vec<usize> = v
                    .iter()
                    .copied()
                    .filter(|i| counted.contains(i) && !current.contains(i))
                    .collect();
                if cardinality.is_some_and(|c| c != 0 && left.len() != c) {
                    continue;
                }
                if !used.contains(date) {
                    cardinality = Some(left.len());
                    candidates.extend(left);
                }
            }
            if candidates.is_empty() {
                break;
            }
            // The cheapest (the first of equals) or the dearest (the last of equals), as a
            // stable sort would give them.
            let pick = match current.len() < cheap_picks {
                true => candidates.iter().copied().min_by(by_price),
                false => candidates.iter().copied().max_by(by_price),
            };
            let Some(pick) = pick else { break };
            current.push(pick);
            if current.len() >= size {
                for c in &current {
                    let date = self.lines[*c].subevent_id;
                    if let Some((_, v)) = dates.iter_mut().find(|(d, _)| *d == date) {
                        v.retain(|x| x != c);
                    }
                }
                groups.push(std::mem::take(&mut current));
            }
        }
        for d in most_first {
            let date = dates[d].0;
            for g in groups.iter_mut() {
                if dates[d].1.is_empty() {
                    break;
                }
                if !g.iter().any(|i| self.lines[*i].subevent_id == date)
                    && let Some(i) = dates[d].1.pop()
                {
                    g.push(i);
                }
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(id: i64, f: impl FnOnce(&mut discount::Model)) -> discount::Model {
        let mut d = discount::Model {
            id,
            event_id: 1,
            active: true,
            internal_name: format!("d{id}"),
            position: 0,
            all_sales_channels: true,
            limit_sales_channels: json!([]),
            available_from: None,
            available_until: None,
            subevent_mode: MIXED.into(),
            subevent_date_from: None,
            subevent_date_until: None,
            condition_all_products: true,
            condition_limit_products: json!([]),
            condition_apply_to_addons: true,
            condition_ignore_voucher_discounted: false,
            condition_min_count: 0,
            condition_min_value_cents: 0,
            benefit_same_products: true,
            benefit_limit_products: json!([]),
            benefit_percent_bps: 0,
            benefit_only_apply_to_cheapest_n_matches: None,
            benefit_apply_to_addons: true,
            benefit_ignore_voucher_discounted: false,
        };
        f(&mut d);
        d
    }

    fn line(item_id: i64, price: i64) -> Line {
        Line {
            item_id,
            price,
            ..Line::default()
        }
    }

    fn prices(d: &Discounts, lines: &[Line]) -> Vec<i64> {
        d.apply("web", Utc::now(), lines)
            .iter()
            .map(|p| p.price)
            .collect()
    }

    #[test]
    fn buy_two_get_one_free_discounts_the_cheapest_of_each_three() {
        let d = Discounts::new(vec![rule(1, |d| {
            d.condition_min_count = 3;
            d.benefit_percent_bps = 10_000;
            d.benefit_only_apply_to_cheapest_n_matches = Some(1);
        })]);
        let lines = [1000, 2000, 3000, 4000, 5000, 6000, 7000].map(|p| line(1, p));
        // Two groups of three: the two cheapest are free, the seventh line is not counted.
        assert_eq!(
            prices(&d, &lines),
            [0, 0, 3000, 4000, 5000, 6000, 7000].to_vec()
        );
        let priced = d.apply("web", Utc::now(), &lines);
        assert_eq!(priced[5].discount, Some(1));
        assert_eq!(priced[6].discount, None);
    }

    #[test]
    fn a_percentage_on_all_matches_applies_once_the_count_is_reached() {
        let d = Discounts::new(vec![rule(1, |d| {
            d.condition_min_count = 2;
            d.benefit_percent_bps = 1_050;
        })]);
        assert_eq!(prices(&d, &[line(1, 1999)]), [1999].to_vec());
        // 19.99 less 10.5 % is 17.891..., rounded to 17.89.
        assert_eq!(
            prices(&d, &[line(1, 1999), line(1, 1000)]),
            [1789, 895].to_vec()
        );
    }

    #[test]
    fn a_minimum_value_counts_gross_prices_of_matching_products_only() {
        let d = Discounts::new(vec![rule(1, |d| {
            d.condition_all_products = false;
            d.condition_limit_products = json!([1]);
            d.condition_min_value_cents = 10_000;
            d.benefit_percent_bps = 2_000;
        })]);
        assert_eq!(
            prices(&d, &[line(1, 6000), line(2, 6000)]),
            [6000, 6000].to_vec()
        );
        assert_eq!(
            prices(&d, &[line(1, 6000), line(1, 4000), line(2, 500)]),
            [4800, 3200, 500].to_vec()
        );
    }

    #[test]
    fn another_set_of_products_can_benefit_and_a_later_discount_skips_taken_lines() {
        let d = Discounts::new(vec![
            rule(1, |d| {
                d.position = 1;
                d.condition_all_products = false;
                d.condition_limit_products = json!([1]);
                d.condition_min_count = 1;
                d.benefit_same_products = false;
                d.benefit_limit_products = json!([2]);
                d.benefit_percent_bps = 5_000;
                d.benefit_only_apply_to_cheapest_n_matches = Some(1);
            }),
            rule(2, |d| {
                d.position = 2;
                d.condition_min_count = 1;
                d.benefit_percent_bps = 1_000;
            }),
        ]);
        // The ticket (taken by the first) buys one shirt at half price (of equal prices,
        // the later line); the other shirt is left for the second discount.
        let lines = [line(1, 10_000), line(2, 2000), line(2, 2000)];
        let priced = d.apply("web", Utc::now(), &lines);
        assert_eq!(
            priced.iter().map(|p| p.price).collect::<Vec<_>>(),
            [10_000, 1800, 1000].to_vec()
        );
        assert_eq!(
            priced.iter().map(|p| p.discount).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(1)].to_vec()
        );
    }

    #[test]
    fn inactive_unavailable_or_other_channel_discounts_and_bundled_lines_are_left_alone() {
        let now = Utc::now();
        let base = |d: &mut discount::Model| {
            d.condition_min_count = 1;
            d.benefit_percent_bps = 5_000;
        };
        for d in [
            rule(1, |d| {
                base(d);
                d.active = false;
            }),
            rule(2, |d| {
                base(d);
                d.available_from = Some(now + chrono::TimeDelta::hours(1));
            }),
            rule(3, |d| {
                base(d);
                d.available_until = Some(now - chrono::TimeDelta::hours(1));
            }),
            rule(4, |d| {
                base(d);
                d.all_sales_channels = false;
                d.limit_sales_channels = json!(["box"]);
            }),
        ] {
            let d = Discounts::new(vec![d]);
            assert_eq!(prices(&d, &[line(1, 1000)]), [1000].to_vec());
        }
        let d = Discounts::new(vec![rule(5, base)]);
        let bundled = Line {
            is_bundled: true,
            addon_to: Some(0),
            ..line(1, 1000)
        };
        assert_eq!(prices(&d, &[line(1, 1000), bundled]), [500, 1000].to_vec());
    }

    #[test]
    fn add_ons_and_voucher_discounted_lines_can_be_left_out() {
        let d = Discounts::new(vec![rule(1, |d| {
            d.condition_min_count = 1;
            d.benefit_percent_bps = 5_000;
            d.condition_apply_to_addons = false;
            d.condition_ignore_voucher_discounted = true;
        })]);
        let addon = Line {
            addon_to: Some(0),
            ..line(1, 1000)
        };
        let vouchered = Line {
            voucher_discount: 100,
            ..line(1, 900)
        };
        assert_eq!(
            prices(&d, &[line(1, 1000), addon, vouchered]),
            [500, 1000, 900].to_vec()
        );
    }

    #[test]
    fn the_same_date_counts_each_date_of_a_series_apart() {
        let d = Discounts::new(vec![rule(1, |d| {
            d.subevent_mode = SAME.into();
            d.condition_min_count = 2;
            d.benefit_percent_bps = 10_000;
            d.benefit_only_apply_to_cheapest_n_matches = Some(1);
        })]);
        let on = |date: i64, price: i64| Line {
            subevent_id: Some(date),
            ..line(1, price)
        };
        assert_eq!(
            prices(&d, &[on(1, 1000), on(2, 1000), on(1, 1500)]),
            [0, 1000, 1500].to_vec()
        );
    }

    #[test]
    fn distinct_dates_group_lines_of_different_dates() {
        let d = Discounts::new(vec![rule(1, |d| {
            d.subevent_mode = DISTINCT.into();
            d.condition_min_count = 2;
            d.benefit_percent_bps = 10_000;
            d.benefit_only_apply_to_cheapest_n_matches = Some(1);
        })]);
        let on = |date: i64, price: i64| Line {
            subevent_id: Some(date),
            ..line(1, price)
        };
        // Two lines of one date make no group; two dates do.
        assert_eq!(
            prices(&d, &[on(1, 1000), on(1, 1000)]),
            [1000, 1000].to_vec()
        );
        assert_eq!(
            prices(&d, &[on(1, 1000), on(2, 2000), on(3, 3000), on(4, 4000)]),
            [0, 0, 3000, 4000].to_vec()
        );
    }

    #[test]
    fn a_date_outside_the_discounts_dates_does_not_count() {
        let start = Utc::now();
        let d = Discounts::new(vec![rule(1, |d| {
            d.subevent_date_from = Some(start);
            d.condition_min_count = 1;
            d.benefit_percent_bps = 5_000;
        })]);
        let on = |days: i64| Line {
            subevent_id: Some(days),
            subevent_start: Some(start + chrono::TimeDelta::days(days)),
            ..line(1, 1000)
        };
        assert_eq!(prices(&d, &[on(-1), on(1)]), [1000, 500].to_vec());
    }
}
