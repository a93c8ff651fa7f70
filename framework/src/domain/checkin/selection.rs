//! Which event (and date, and list) a scanning device should work on now, as pretix decides:
//! a running event wins, the current one is kept while it runs, today's event is preferred,
//! and between two events the device switches half-way; a device at a gate only sees events
//! with a list of its gate, and the list keeps the current list's name when it can.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use sea_orm::{ConnectionTrait, DbErr, FromQueryResult};

use super::rows;
use crate::domain::grants::EventScope;

/// An event, or a date of a series, a device could scan for.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The event's ID.
    pub event_id: i64,
    /// The event's slug.
    pub slug: String,
    /// The date of a series.
    pub subevent: Option<i64>,
    /// Admission, else start.
    pub first: DateTime<Utc>,
    /// End, else start.
    pub last: DateTime<Utc>,
    /// The end, when known.
    pub date_to: Option<DateTime<Utc>>,
    /// The event's time zone.
    pub tz: Tz,
}

impl Candidate {
    fn same(&self, other: &Candidate) -> bool {
        self.event_id == other.event_id && self.subevent == other.subevent
    }
}

/// What the selection says about the event.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    /// Switch to this candidate (an index into the candidates).
    Suggest(usize),
    /// Keep the current one (304).
    Keep,
    /// Nothing to scan for (404).
    Nothing,
}

/// Picks an event among `candidates` for a device now working on `current`.
pub fn pick(candidates: &[Candidate], current: Option<&Candidate>, now: DateTime<Utc>) -> Pick {
    let last_started = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.first <= now)
        .max_by_key(|(i, c)| (c.first, std::cmp::Reverse(*i)));
    if let Some((i, ls)) = last_started
        && current.is_none_or(|cur| !cur.same(ls))
        && ls.date_to.is_some_and(|to| now < to)
    {
        return Pick::Suggest(i);
    }
    if let Some(cur) = current
        && cur.first <= now
        && cur.date_to.is_some_and(|to| now < to)
    {
        return Pick::Keep;
    }
    let upcoming = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.first > now)
        .min_by_key(|(i, c)| (c.first, *i));
    match (last_started, upcoming) {
        (None, None) => Pick::Nothing,
        (Some((i, _)), None) | (None, Some((i, _))) => Pick::Suggest(i),
        (Some((li, ls)), Some((ui, up))) => {
            let tz = current.map_or(ls.tz, |c| c.tz);
            let today = now.with_timezone(&tz).date_naive();
            let ls_today = ls.first.with_timezone(&tz).date_naive() == today
                || ls.last.with_timezone(&tz).date_naive() == today;
            let up_today = up.first.with_timezone(&tz).date_naive() == today;
            if ls_today && !up_today {
                Pick::Suggest(li)
            } else if up_today && !ls_today {
                Pick::Suggest(ui)
            } else {
                let gap = up.first - ls.last;
                let half = ls.last + Duration::seconds(gap.num_seconds() / 2);
                if now > half {
                    Pick::Suggest(ui)
                } else {
                    Pick::Suggest(li)
                }
            }
        }
    }
}

/// A check-in list as the selection sees it.
#[derive(Debug, Clone, FromQueryResult)]
pub struct ListInfo {
    /// ID.
    pub id: i64,
    /// Its event.
    pub event_id: i64,
    /// Name.
    pub name: String,
    /// Its date of a series.
    pub subevent_id: Option<i64>,
    /// That date's start.
    pub subevent_date_from: Option<DateTime<Utc>>,
    /// Whether it is at the device's gate (always true without a gate).
    pub at_gate: bool,
}

/// The list for a candidate: one with the current list's name (or ID) if there is one,
/// else the first by date, name and ID.
pub fn pick_list(
    lists: &[ListInfo],
    candidate: &Candidate,
    current_list: Option<&ListInfo>,
) -> Option<i64> {
    let mut fitting: Vec<&ListInfo> = lists
        .iter()
        .filter(|l| {
            l.event_id == candidate.event_id
                && l.at_gate
                && (l.subevent_id.is_none() || l.subevent_id == candidate.subevent)
        })
        .collect();
    fitting.sort_by(|a, b| {
        (a.subevent_date_from, &a.name, a.id).cmp(&(b.subevent_date_from, &b.name, b.id))
    });
    if let Some(cur) = current_list
        && let Some(same) = fitting
            .iter()
            .find(|l| l.name == cur.name || l.id == cur.id)
    {
        return Some(same.id);
    }
    fitting.first().map(|l| l.id)
}

#[derive(FromQueryResult)]
struct Row {
    event_id: i64,
    slug: String,
    subevent: Option<i64>,
    date_from: DateTime<Utc>,
    date_to: Option<DateTime<Utc>>,
    date_admission: Option<DateTime<Utc>>,
    timezone: String,
    live: bool,
    active: bool,
}

impl Row {
    fn candidate(self) -> Candidate {
        Candidate {
            event_id: self.event_id,
            slug: self.slug,
            subevent: self.subevent,
            first: self.date_admission.unwrap_or(self.date_from),
            last: self.date_to.unwrap_or(self.date_from),
            date_to: self.date_to,
            tz: self.timezone.parse().unwrap_or(chrono_tz::UTC),
        }
    }
}

/// What the device's request resolves to.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    /// Switch: event slug, date, list.
    Switch(String, Option<i64>, Option<i64>),
    /// Keep (304).
    Keep,
    /// Nothing (404).
    Nothing,
}

/// Decides for a device of `organizer_id` seeing `scope`, standing at `gate`, working on the
/// current event, date and list (as it sends them).
pub async fn select(
    db: &impl ConnectionTrait,
    organizer_id: i64,
    scope: &EventScope,
    gate: Option<i64>,
    current: (Option<&str>, Option<i64>, Option<i64>),
    now: DateTime<Utc>,
) -> Result<Selection, DbErr> {
    let all: Vec<Row> = rows(
        db,
        "SELECT e.id AS event_id, e.slug, NULL AS subevent, e.date_from, e.date_to, \
         e.date_admission, e.timezone, e.live, TRUE AS active FROM events e \
         WHERE e.organizer_id = $1 AND NOT e.has_subevents \
         UNION ALL \
         SELECT e.id AS event_id, e.slug, s.id AS subevent, s.date_from, s.date_to, \
         s.date_admission, e.timezone, e.live, s.active FROM events e \
         JOIN subevents s ON s.event_id = e.id WHERE e.organizer_id = $1 AND e.has_subevents",
        vec![organizer_id.into()],
    )
    .await?;
    let lists: Vec<ListInfo> = rows(
        db,
        "SELECT l.id, l.event_id, l.name, l.subevent_id, s.date_from AS subevent_date_from, \
         ($2 = 0 OR EXISTS (SELECT 1 FROM checkinlist_gates g WHERE g.list_id = l.id \
          AND g.gate_id = $2)) AS at_gate \
         FROM checkin_lists l JOIN events e ON e.id = l.event_id \
         LEFT JOIN subevents s ON s.id = l.subevent_id WHERE e.organizer_id = $1",
        vec![organizer_id.into(), gate.unwrap_or(0).into()],
    )
    .await?;
    let (cur_slug, cur_sub, cur_list) = current;
    let current = cur_slug.and_then(|slug| {
        all.iter()
            .find(|r| {
                r.slug == slug
                    && scope.covers(r.event_id)
                    && (r.subevent.is_none() || r.subevent == cur_sub)
            })
            .map(|r| {
                Row {
                    event_id: r.event_id,
                    slug: r.slug.clone(),
                    subevent: r.subevent,
                    date_from: r.date_from,
                    date_to: r.date_to,
                    date_admission: r.date_admission,
                    timezone: r.timezone.clone(),
                    live: r.live,
                    active: r.active,
                }
                .candidate()
            })
    });
    let current_list = current.as_ref().and_then(|c| {
        cur_list.and_then(|id| {
            lists
                .iter()
                .find(|l| l.id == id && l.event_id == c.event_id)
        })
    });
    let candidates: Vec<Candidate> = all
        .into_iter()
        .filter(|r| r.live && r.active && scope.covers(r.event_id))
        .map(Row::candidate)
        .filter(|c| {
            gate.is_none()
                || lists.iter().any(|l| {
                    l.event_id == c.event_id
                        && l.at_gate
                        && (l.subevent_id.is_none() || l.subevent_id == c.subevent)
                })
        })
        .collect();
    Ok(match pick(&candidates, current.as_ref(), now) {
        Pick::Nothing => Selection::Nothing,
        Pick::Keep => Selection::Keep,
        Pick::Suggest(i) => {
            let c = &candidates[i];
            let list = pick_list(&lists, c, current_list);
            if cur_slug == Some(c.slug.as_str()) && cur_sub == c.subevent && cur_list == list {
                Selection::Keep
            } else {
                Selection::Switch(c.slug.clone(), c.subevent, list)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 6, 10, 0, 0, 0)
            .single()
            .expect("time")
            + Duration::hours(h)
    }

    fn event(id: i64, from: i64, to: i64) -> Candidate {
        Candidate {
            event_id: id,
            slug: format!("e{id}"),
            subevent: None,
            first: at(from),
            last: at(to),
            date_to: Some(at(to)),
            tz: chrono_tz::UTC,
        }
    }

    #[test]
    fn a_running_event_wins() {
        let c = [event(1, 10, 14), event(2, 30, 34)];
        assert_eq!(pick(&c, None, at(12)), Pick::Suggest(0));
    }

    #[test]
    fn the_current_event_is_kept_while_it_runs() {
        let c = [event(1, 10, 14), event(2, 11, 20)];
        assert_eq!(pick(&c, Some(&event(2, 11, 20)), at(15)), Pick::Keep);
    }

    #[test]
    fn the_device_switches_half_way_between_two_events() {
        let c = [event(1, -50, -40), event(2, 40, 50)];
        assert_eq!(pick(&c, None, at(-1)), Pick::Suggest(0));
        assert_eq!(pick(&c, None, at(1)), Pick::Suggest(1));
    }

    #[test]
    fn today_is_preferred() {
        let c = [event(1, -30, -28), event(2, 20, 22)];
        assert_eq!(pick(&c, None, at(2)), Pick::Suggest(1));
    }

    #[test]
    fn nothing_to_scan_for() {
        assert_eq!(pick(&[], None, at(0)), Pick::Nothing);
    }
}
