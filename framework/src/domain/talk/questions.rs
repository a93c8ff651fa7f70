//! Questions (custom fields) of the call for papers: the kinds of answers they take, and the
//! one rule of who sees which questions, and so which answers. As pretalx: organisers of the
//! call for papers and those who may change the event's settings see every question;
//! reviewers the active questions shown to reviewers and the questions to reviewers; anyone
//! else who sees the event the active public questions to submitters and speakers.

use super::access::Role;
use crate::domain::permissions::Permission;

/// The kind of answer a question takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Variant {
    /// A number.
    Number,
    /// One line of text.
    #[default]
    String,
    /// Several lines of text.
    Text,
    /// A URL.
    Url,
    /// A date.
    Date,
    /// A date and time.
    Datetime,
    /// Yes or no.
    Boolean,
    /// An uploaded file.
    File,
    /// One of the options.
    Choices,
    /// Several of the options.
    MultipleChoice,
}

impl Variant {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Number => "number",
            Self::String => "string",
            Self::Text => "text",
            Self::Url => "url",
            Self::Date => "date",
            Self::Datetime => "datetime",
            Self::Boolean => "boolean",
            Self::File => "file",
            Self::Choices => "choices",
            Self::MultipleChoice => "multiple_choice",
        }
    }

    /// The variant of a stored name (`string` for anything unknown).
    pub fn parse(name: &str) -> Self {
        match name {
            "number" => Self::Number,
            "text" => Self::Text,
            "url" => Self::Url,
            "date" => Self::Date,
            "datetime" => Self::Datetime,
            "boolean" => Self::Boolean,
            "file" => Self::File,
            "choices" => Self::Choices,
            "multiple_choice" => Self::MultipleChoice,
            _ => Self::String,
        }
    }

    /// Whether answers pick options.
    pub fn has_options(self) -> bool {
        matches!(self, Self::Choices | Self::MultipleChoice)
    }

    /// Whether answers are files.
    pub fn is_file(self) -> bool {
        self == Self::File
    }

    /// Whether answers are text checked by [`super::answers::checked_text`].
    pub fn is_text(self) -> bool {
        !self.has_options() && !self.is_file()
    }
}

/// Whether the caller sees the organisers' view of questions: every question, with the
/// fields only organisers see.
pub fn orga_view(role: &Role) -> bool {
    role.is_orga() || role.permissions.has(Permission::ChangeEventSettings)
}

/// The SQL condition on questions (alias `q`) the caller may see; answers are seen with
/// their questions.
pub fn visible(role: &Role) -> &'static str {
    if role.is_only_reviewer() {
        "(q.active = TRUE AND (q.is_visible_to_reviewers = TRUE OR q.target = 'reviewer'))"
    } else if orga_view(role) {
        "(1 = 1)"
    } else {
        "(q.is_public = TRUE AND q.active = TRUE AND q.target <> 'reviewer')"
    }
}

#[cfg(test)]
mod tests {
    use super::{Variant, visible};
    use crate::domain::permissions::{Permission, PermissionSet};
    use crate::domain::talk::access::Role;

    fn role(permissions: &[Permission]) -> Role {
        Role {
            permissions: permissions.iter().copied().collect::<PermissionSet>(),
            ..Role::default()
        }
    }

    #[test]
    fn stored_names_read_back_as_their_variant() {
        for v in [
            Variant::Number,
            Variant::String,
            Variant::Text,
            Variant::Url,
            Variant::Date,
            Variant::Datetime,
            Variant::Boolean,
            Variant::File,
            Variant::Choices,
            Variant::MultipleChoice,
        ] {
            assert_eq!(Variant::parse(v.as_str()), v);
        }
        assert_eq!(Variant::parse("poll"), Variant::String);
    }

    #[test]
    fn reviewers_organisers_and_the_public_see_different_questions() {
        let reviewer = visible(&role(&[Permission::Review]));
        assert!(reviewer.contains("is_visible_to_reviewers"), "{reviewer}");
        assert_eq!(visible(&role(&[Permission::ChangeSubmissions])), "(1 = 1)");
        assert_eq!(
            visible(&role(&[Permission::Review, Permission::ChangeSubmissions])),
            "(1 = 1)",
            "organisers who review see every question"
        );
        assert!(visible(&Role::default()).contains("is_public"));
    }
}
