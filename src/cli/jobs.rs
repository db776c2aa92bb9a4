//! `sparring jobs`: every job in the database, one line each.

use crate::store::{self, JobKind};

pub async fn jobs(database: &str) -> anyhow::Result<i32> {
    if let Some(code) = super::refuse_missing_database(database) {
        return Ok(code);
    }
    let store = store::open(database).await?;
    let rows = store.all_jobs().await?;
    if rows.is_empty() {
        eprintln!("no jobs in {database}");
        return Ok(0);
    }
    let mut lines = vec![[
        "id".to_string(),
        "name".into(),
        "kind".into(),
        "status".into(),
        "created (UTC)".into(),
        "items done/failed/left".into(),
        "mean reward".into(),
    ]];
    for row in rows {
        let counts = store.item_counts(row.id).await?;
        let mean = match row.kind {
            JobKind::Judging | JobKind::Synthesis => None,
            JobKind::Generation | JobKind::Import => store.job_summary(row.id).await?.mean_reward,
        };
        lines.push([
            row.id.to_string(),
            row.name,
            row.kind.to_string(),
            row.status.as_str().to_string(),
            utc_minute(row.created_at),
            format!(
                "{}/{}/{}",
                counts.done,
                counts.failed,
                counts.pending + counts.leased
            ),
            mean.map_or("n/a".to_string(), |r| format!("{r:.3}")),
        ]);
    }
    print!("{}", columns(&lines));
    Ok(0)
}

/// Rows as left-aligned columns two spaces apart.
pub fn columns<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM` in UTC.
fn utc_minute(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let (days, of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_date(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        of_day / 3600,
        of_day % 3600 / 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01: count in 400-year
/// eras (146,097 days each) from 0000-03-01, so that leap days end a year.
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_milliseconds_read_as_utc_dates_across_leap_days_and_year_ends() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00");
        assert_eq!(utc_minute(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(utc_minute(951_868_799_000), "2000-02-29 23:59");
        assert_eq!(utc_minute(1_704_067_199_000), "2023-12-31 23:59");
        assert_eq!(utc_minute(1_795_449_600_000), "2026-11-23 16:00");
        assert_eq!(utc_minute(-60_000), "1969-12-31 23:59");
    }

    #[test]
    fn columns_are_padded_to_their_widest_cell() {
        let rows = [
            ["id".to_string(), "name".to_string()],
            ["12".to_string(), "quickstart".to_string()],
        ];
        assert_eq!(columns(&rows), "id  name\n12  quickstart\n");
    }
}
