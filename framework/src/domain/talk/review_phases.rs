//! Review phases: what reviewers of an event may do and see while a phase is active (write
//! reviews, see speaker names, other reviewers' names, other reviews). At most one phase of
//! an event is active (a partial unique index holds it). An event whose organisers have
//! configured no phase at all reviews as in pretalx's default phase of a new event
//! ([`Phase::default`]); once phases exist, an event without an active one has none, and
//! its reviewers may neither review nor see speaker names.
//!
//! This module reads phases; [`super::access`] applies them to the caller's role and
//! [`super::reviews`] holds the rules of reviews and of changing phases.

use sea_orm::ConnectionTrait;

use super::sql::first;
use crate::domain::refusal::Refusal;

/// Whether reviewers see the reviews of others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherReviews {
    /// Always.
    Always,
    /// Never.
    Never,
    /// Of the submissions they have reviewed themselves.
    AfterReview,
}

impl OtherReviews {
    /// Every choice.
    pub const ALL: [OtherReviews; 3] = [Self::Always, Self::Never, Self::AfterReview];

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::Never => "never",
            Self::AfterReview => "after_review",
        }
    }

    /// The choice of a stored name; `after_review`, pretalx's default, for anything else.
    pub fn from_name(name: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .unwrap_or(Self::AfterReview)
    }
}

/// What a phase allows reviewers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// The phase's ID; `None` for the default of an event without phases.
    pub id: Option<i64>,
    /// Reviewers may write and change reviews.
    pub can_review: bool,
    /// Whether reviewers see other reviews.
    pub can_see_other_reviews: OtherReviews,
    /// Reviewers see speaker names (else the talk-side API is closed to those who only
    /// review).
    pub can_see_speaker_names: bool,
    /// Reviewers see who wrote the other reviews.
    pub can_see_reviewer_names: bool,
    /// Reviewers may accept and reject submissions.
    pub can_change_submission_state: bool,
}

impl Default for Phase {
    /// pretalx's "Review" phase of a new event: reviewing open, names visible, other reviews
    /// after one's own.
    fn default() -> Self {
        Self {
            id: None,
            can_review: true,
            can_see_other_reviews: OtherReviews::AfterReview,
            can_see_speaker_names: true,
            can_see_reviewer_names: true,
            can_change_submission_state: false,
        }
    }
}

/// The event's active phase: [`Phase::default`] when the event has no phase at all, `None`
/// when it has phases of which none is active. One query.
pub async fn active(db: &impl ConnectionTrait, event_id: i64) -> Result<Option<Phase>, Refusal> {
    let row = first(
        db,
        "SELECT id, is_active, can_review, can_see_other_reviews, can_see_speaker_names, \
         can_see_reviewer_names, can_change_submission_state FROM talk_review_phases \
         WHERE event_id = $1 ORDER BY is_active DESC, id LIMIT 1",
        vec![event_id.into()],
    )
    .await?;
    let Some(r) = row else {
        return Ok(Some(Phase::default()));
    };
    if !r.try_get::<bool>("", "is_active")? {
        return Ok(None);
    }
    Ok(Some(Phase {
        id: Some(r.try_get("", "id")?),
        can_review: r.try_get("", "can_review")?,
        can_see_other_reviews: OtherReviews::from_name(
            &r.try_get::<String>("", "can_see_other_reviews")?,
        ),
        can_see_speaker_names: r.try_get("", "can_see_speaker_names")?,
        can_see_reviewer_names: r.try_get("", "can_see_reviewer_names")?,
        can_change_submission_state: r.try_get("", "can_change_submission_state")?,
    }))
}

/// Whether speaker names are hidden from reviewers while `phase` is active (no active
/// phase hides them, as in pretalx).
pub fn hides_speaker_names(phase: Option<&Phase>) -> bool {
    !phase.is_some_and(|p| p.can_see_speaker_names)
}

#[cfg(test)]
mod tests {
    use super::{OtherReviews, Phase, hides_speaker_names};

    #[test]
    fn without_an_active_phase_names_are_hidden_and_the_default_phase_shows_them() {
        assert!(hides_speaker_names(None));
        assert!(!hides_speaker_names(Some(&Phase::default())));
        let anonymised = Phase {
            can_see_speaker_names: false,
            ..Phase::default()
        };
        assert!(hides_speaker_names(Some(&anonymised)));
    }

    #[test]
    fn other_reviews_read_back_from_their_names() {
        for c in OtherReviews::ALL {
            assert_eq!(OtherReviews::from_name(c.name()), c);
        }
        assert_eq!(
            OtherReviews::from_name("sometimes"),
            OtherReviews::AfterReview
        );
    }
}
