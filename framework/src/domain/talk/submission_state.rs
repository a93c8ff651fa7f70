//! The states a submission moves through, with pretalx's names.

/// The state of a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Submitted, waiting for a decision.
    Submitted,
    /// Accepted, waiting for the speakers' confirmation.
    Accepted,
    /// Rejected.
    Rejected,
    /// Accepted and confirmed by the speakers.
    Confirmed,
    /// Withdrawn by the speakers.
    Withdrawn,
    /// Canceled after acceptance.
    Canceled,
}

impl State {
    /// Every state.
    pub const ALL: [State; 6] = [
        State::Submitted,
        State::Accepted,
        State::Rejected,
        State::Confirmed,
        State::Withdrawn,
        State::Canceled,
    ];

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            State::Submitted => "submitted",
            State::Accepted => "accepted",
            State::Rejected => "rejected",
            State::Confirmed => "confirmed",
            State::Withdrawn => "withdrawn",
            State::Canceled => "canceled",
        }
    }

    /// The state of a stored name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The states a submission may move to this one from, as pretalx allows.
    pub fn sources(self) -> &'static [State] {
        match self {
            State::Submitted => &[State::Rejected, State::Accepted, State::Withdrawn],
            State::Accepted => &[
                State::Submitted,
                State::Rejected,
                State::Confirmed,
                State::Canceled,
            ],
            State::Rejected => &[State::Submitted, State::Accepted],
            State::Confirmed => &[State::Accepted, State::Canceled],
            State::Withdrawn => &[State::Submitted, State::Accepted],
            State::Canceled => &[State::Accepted, State::Confirmed],
        }
    }

    /// The log action of a move to this state.
    pub fn action(self) -> &'static str {
        match self {
            State::Submitted => "make_submitted",
            State::Accepted => "accept",
            State::Rejected => "reject",
            State::Confirmed => "confirm",
            State::Withdrawn => "withdraw",
            State::Canceled => "cancel",
        }
    }

    /// Whether a submission moved to this state stops being featured.
    pub fn unfeatures(self) -> bool {
        matches!(self, State::Rejected | State::Canceled | State::Withdrawn)
    }
}
