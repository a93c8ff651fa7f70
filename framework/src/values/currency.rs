//! ISO 4217 currency codes.

const CODES: &str = "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL \
BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD \
FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS \
KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK \
MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD \
SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX \
USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG";

/// Every active ISO 4217 currency code, in alphabetical order.
pub fn codes() -> impl Iterator<Item = &'static str> {
    CODES.split_whitespace()
}

/// Whether `code` is an active ISO 4217 currency code (upper case).
pub fn is_valid(code: &str) -> bool {
    code.len() == 3 && codes().any(|c| c == code)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_codes_are_valid_and_others_not() {
        assert!(super::is_valid("EUR"));
        assert!(super::is_valid("USD"));
        assert!(!super::is_valid("eur"));
        assert!(!super::is_valid("XXX"));
        assert!(!super::is_valid("EURO"));
    }
}
