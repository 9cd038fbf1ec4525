//! js-yaml 3 timestamps and the JavaScript `Date` texts OpenCode would print for them
//! (`toISOString()`, and `Date.prototype.toString()` in UTC for a key).

/// js-yaml 3 timestamp: `Some(ms since epoch)` (NaN when out of range) when `s` is one.
pub(super) fn timestamp(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let num = |i: &mut usize, min: usize, max: usize| -> Option<f64> {
        let st = *i;
        while *i < b.len() && *i - st < max && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i - st < min {
            return None;
        }
        s[st..*i].parse::<f64>().ok()
    };
    let lit = |i: &mut usize, c: u8| -> Option<()> { (b.get(*i) == Some(&c)).then(|| *i += 1) };
    let year = num(&mut i, 4, 4)?;
    lit(&mut i, b'-')?;
    // `YYYY-MM-DD` exactly, or the long form with one- or two-digit month and day.
    let month = num(&mut i, 1, 2)?;
    lit(&mut i, b'-')?;
    let day = num(&mut i, 1, 2)?;
    if i == b.len() {
        if s.len() != 10 {
            return None;
        }
        return Some(date_utc(year, month - 1.0, day, 0.0, 0.0, 0.0, 0.0));
    }
    // (?:[Tt]|[ \t]+)
    match b.get(i) {
        Some(b'T' | b't') => i += 1,
        Some(b' ' | b'\t') => {
            while matches!(b.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
        }
        _ => return None,
    }
    let hour = num(&mut i, 1, 2)?;
    lit(&mut i, b':')?;
    let minute = num(&mut i, 2, 2)?;
    lit(&mut i, b':')?;
    let second = num(&mut i, 2, 2)?;
    let mut fraction = 0.0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let st = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let mut f: String = s[st..i].chars().take(3).collect();
        if !f.is_empty() {
            while f.len() < 3 {
                f.push('0');
            }
            fraction = f.parse::<f64>().unwrap_or(0.0);
        }
    }
    // (?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?$
    let mut delta = 0.0;
    if i < b.len() {
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        match b.get(i) {
            Some(b'Z') => i += 1,
            Some(c @ (b'-' | b'+')) => {
                let neg = *c == b'-';
                i += 1;
                let th = num(&mut i, 1, 2)?;
                let mut tm = 0.0;
                if b.get(i) == Some(&b':') {
                    i += 1;
                    tm = num(&mut i, 2, 2)?;
                }
                delta = (th * 60.0 + tm) * 60000.0;
                if neg {
                    delta = -delta;
                }
            }
            _ => return None,
        }
        if i != b.len() {
            return None;
        }
    }
    let t = date_utc(year, month - 1.0, day, hour, minute, second, fraction);
    Some(time_clip(t - delta))
}

pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

pub(super) fn time_clip(t: f64) -> f64 {
    if t.is_finite() && t.abs() <= 8.64e15 {
        t
    } else {
        f64::NAN
    }
}

/// `Date.UTC(y, m, d, h, mi, s, ms)` for the small integers a timestamp holds.
pub(super) fn date_utc(y: f64, m: f64, d: f64, h: f64, mi: f64, s: f64, ms: f64) -> f64 {
    let y = if (0.0..=99.0).contains(&y) {
        1900.0 + y
    } else {
        y
    };
    let ym = y as i64 + (m as i64).div_euclid(12);
    let mn = (m as i64).rem_euclid(12);
    let day = days_from_civil(ym, mn + 1, 1) as f64 + d - 1.0;
    let time = h * 3_600_000.0 + mi * 60_000.0 + s * 1000.0 + ms;
    time_clip(day * 86_400_000.0 + time)
}

pub(super) fn civil(t: f64) -> (i64, i64, i64, i64, i64, i64, i64, i64) {
    let ms_total = t as i64;
    let days = ms_total.div_euclid(86_400_000);
    let ms_day = ms_total.rem_euclid(86_400_000);
    // civil_from_days
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let weekday = (days + 4).rem_euclid(7);
    (
        y,
        m,
        d,
        ms_day / 3_600_000,
        ms_day / 60_000 % 60,
        ms_day / 1000 % 60,
        ms_day % 1000,
        weekday,
    )
}

/// `Date.prototype.toISOString()`.
pub(super) fn date_iso(t: f64) -> String {
    if t.is_nan() {
        return "Invalid Date".into();
    }
    let (y, m, d, h, mi, s, ms, _) = civil(t);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!("{year}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// `Date.prototype.toString()`, in UTC.
pub(super) fn date_to_string(t: f64) -> String {
    if t.is_nan() {
        return "Invalid Date".into();
    }
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (y, m, d, h, mi, s, _, wd) = civil(t);
    let year = if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("{y:04}")
    };
    format!(
        "{} {} {d:02} {year} {h:02}:{mi:02}:{s:02} GMT+0000 (Coordinated Universal Time)",
        DAYS.get(wd as usize).unwrap_or(&"Thu"),
        MONTHS.get((m - 1) as usize).unwrap_or(&"Jan"),
    )
}
