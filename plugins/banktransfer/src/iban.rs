//! IBAN and BIC checks (ISO 13616 and ISO 9362).

/// Ok for a well-formed IBAN with a valid checksum (spaces allowed), else a message.
pub fn check(text: &str) -> Result<(), String> {
    let iban: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let iban = iban.to_ascii_uppercase();
    let well_formed = (15..=34).contains(&iban.len())
        && iban.chars().all(|c| c.is_ascii_alphanumeric())
        && iban[..2].chars().all(|c| c.is_ascii_alphabetic())
        && iban[2..4].chars().all(|c| c.is_ascii_digit());
    if !well_formed {
        return Err("Enter a valid IBAN.".into());
    }
    // Move the country and check digits to the end, read letters as 10..35, and the whole
    // number must leave 1 divided by 97; digit by digit keeps it small.
    let rearranged = iban[4..].chars().chain(iban[..4].chars());
    let mut rest = 0u32;
    for c in rearranged {
        let Some(value) = c.to_digit(36) else {
            return Err("Enter a valid IBAN.".into());
        };
        rest = if value < 10 {
            (rest * 10 + value) % 97
        } else {
            (rest * 100 + value) % 97
        };
    }
    if rest == 1 {
        Ok(())
    } else {
        Err("The IBAN's checksum is wrong; please check it for typing errors.".into())
    }
}

/// Ok for a well-formed BIC: 4 letters (bank), 2 letters (country), 2 letters or digits
/// (place), and optionally 3 more (branch).
pub fn check_bic(text: &str) -> Result<(), String> {
    let b = text.trim().to_ascii_uppercase();
    let ok = (b.len() == 8 || b.len() == 11)
        && b[..6].chars().all(|c| c.is_ascii_alphabetic())
        && b[6..].chars().all(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err("Enter a valid BIC.".into())
    }
}

/// An IBAN in groups of four, as printed.
pub fn printable(text: &str) -> String {
    let compact: Vec<char> = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    compact
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{check, check_bic, printable};

    #[test]
    fn ibans_with_a_valid_checksum_pass_and_others_are_refused() {
        assert_eq!(check("DE89 3704 0044 0532 0130 00"), Ok(()));
        assert_eq!(check("GB82WEST12345698765432"), Ok(()));
        assert_eq!(check("gb82 west 1234 5698 7654 32"), Ok(()));
        assert!(check("DE89 3704 0044 0532 0130 01").is_err());
        assert!(check("DE00").is_err());
        assert!(check("1289370400440532013000").is_err());
        assert!(check("DE89 3704 0044 0532 0130 0ä").is_err());
    }

    #[test]
    fn bics_have_eight_or_eleven_characters() {
        assert_eq!(check_bic("COBADEFFXXX"), Ok(()));
        assert_eq!(check_bic("COBADEFF"), Ok(()));
        assert!(check_bic("COBADE").is_err());
        assert!(check_bic("C0BADEFF").is_err());
    }

    #[test]
    fn ibans_print_in_groups_of_four() {
        assert_eq!(
            printable("de89370400440532013000"),
            "DE89 3704 0044 0532 0130 00"
        );
    }
}
