//! Reading a persona table row by row, never whole: CSV (a header line, then
//! one row per record), JSONL (one JSON object per line) or Parquet (through
//! the `parquet` crate's record reader, one row at a time).

use std::fs::File;
use std::io::BufReader;

use crate::jsonl::JsonlReader;
use std::path::Path;

use serde_json::Value;

use super::csv_quotes::{unclosed_quote, QuoteWatch};
use super::{Columns, Place, Row, TableError};

/// The formats a table may be written in, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Jsonl,
    Parquet,
}

impl Format {
    pub fn of(path: &Path) -> Result<Format, TableError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("csv") => Ok(Format::Csv),
            Some("jsonl") => Ok(Format::Jsonl),
            Some("parquet") => Ok(Format::Parquet),
            _ => Err(TableError::table(
                path,
                None,
                "is not a persona table; name a .csv, .jsonl or .parquet file",
            )),
        }
    }
}

/// Call `each` with every row of the table at `path`, in order; the number of
/// rows read. A table without rows is an error.
pub fn for_each_row(
    path: &Path,
    each: &mut dyn FnMut(Row) -> Result<(), TableError>,
) -> Result<u64, TableError> {
    let rows = match Format::of(path)? {
        Format::Csv => read_csv(path, each)?,
        Format::Jsonl => read_jsonl(path, each)?,
        Format::Parquet => read_parquet(path, each)?,
    };
    if rows == 0 {
        return Err(TableError::table(
            path,
            None,
            "holds no rows; a persona table needs at least one person",
        ));
    }
    Ok(rows)
}

fn open(path: &Path) -> Result<File, TableError> {
    crate::regular_file::open(path)
        .map_err(|e| TableError::table(path, None, format!("cannot be read: {e}")))
}

fn read_csv(
    path: &Path,
    each: &mut dyn FnMut(Row) -> Result<(), TableError>,
) -> Result<u64, TableError> {
    let mut reader =
        csv::ReaderBuilder::new().from_reader(QuoteWatch::new(BufReader::new(open(path)?)));
    let headers = reader
        .headers()
        .map_err(|e| csv_error(path, &e))?
        .iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    let mut record = csv::StringRecord::new();
    let mut rows = 0;
    while reader
        .read_record(&mut record)
        .map_err(|e| csv_error(path, &e))?
    {
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let columns: Columns = headers
            .iter()
            .zip(record.iter())
            .map(|(name, cell)| (name.clone(), csv_value(cell)))
            .collect();
        rows += 1;
        each(Row {
            place: Place::Line(line),
            columns,
        })?;
    }
    Ok(rows)
}

fn csv_error(path: &Path, e: &csv::Error) -> TableError {
    if let Some(quote) = unclosed_quote(e) {
        return TableError::table(path, Some(Place::Line(quote.line)), quote.to_string());
    }
    let place = e.position().map(|p| Place::Line(p.line()));
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("has {len} fields where the header has {expected_len}"),
        _ => format!("is not valid CSV: {e}"),
    };
    TableError::table(path, place, message)
}

/// A CSV cell as the value a JSONL or Parquet table would hold: a number
/// when it reads as one, `null` when empty, else the text.
pub fn csv_value(cell: &str) -> Value {
    if cell.is_empty() {
        return Value::Null;
    }
    if let Ok(n) = cell.parse::<i64>() {
        return Value::from(n);
    }
    match cell.parse::<f64>() {
        Ok(x) if x.is_finite() && !cell.starts_with(['+', '.']) => {
            serde_json::Number::from_f64(x).map_or_else(|| Value::from(cell), Value::Number)
        }
        _ => Value::from(cell),
    }
}

fn read_jsonl(
    path: &Path,
    each: &mut dyn FnMut(Row) -> Result<(), TableError>,
) -> Result<u64, TableError> {
    let mut reader = JsonlReader::new(BufReader::new(open(path)?));
    let mut rows = 0;
    while let Some(next) = reader.next_line() {
        let (number, line) = next.map_err(|e| {
            let place = e.line().map(|n| Place::Line(n as u64));
            TableError::table(path, place, format!("cannot be read: {}", e.reason()))
        })?;
        let place = Place::Line(number as u64);
        let columns = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(columns)) => columns,
            Ok(_) => {
                return Err(TableError::table(
                    path,
                    Some(place),
                    "is not a JSON object; each line of a persona table is one person, \
                     e.g. {\"uuid\": \"…\", \"persona\": \"…\"}",
                ))
            }
            Err(e) => {
                return Err(TableError::table(
                    path,
                    Some(place),
                    format!("is not valid JSON: {e}"),
                ))
            }
        };
        rows += 1;
        each(Row { place, columns })?;
    }
    Ok(rows)
}

fn read_parquet(
    path: &Path,
    each: &mut dyn FnMut(Row) -> Result<(), TableError>,
) -> Result<u64, TableError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let bad = |e: parquet::errors::ParquetError| {
        TableError::table(
            path,
            None,
            format!(
                "is not a Parquet file sparring can read ({e}); write it with Snappy or no \
                 compression, e.g. pyarrow's default"
            ),
        )
    };
    let reader = SerializedFileReader::new(open(path)?).map_err(bad)?;
    let mut rows = 0;
    for row in reader.get_row_iter(None).map_err(bad)? {
        let place = Place::Row(rows + 1);
        let row =
            row.map_err(|e| TableError::table(path, Some(place), format!("cannot be read: {e}")))?;
        let columns = match row.to_json_value() {
            Value::Object(columns) => columns,
            _ => Columns::new(),
        };
        rows += 1;
        each(Row { place, columns })?;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_read_as_numbers_when_they_are_numbers() {
        assert_eq!(csv_value("65"), Value::from(65));
        assert_eq!(csv_value("0.25"), Value::from(0.25));
        assert_eq!(csv_value(""), Value::Null);
        assert_eq!(csv_value("USA"), Value::from("USA"));
        assert_eq!(csv_value("nan"), Value::from("nan"));
        assert_eq!(csv_value("+1"), Value::from(1));
    }

    #[test]
    fn a_row_of_the_wrong_width_is_named_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "uuid,age\na,1\nb\n").unwrap();
        let err = for_each_row(&path, &mut |_| Ok(())).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("line 3") && text.contains("1 fields where the header has 2"),
            "{text}"
        );
    }

    #[test]
    fn a_quote_left_open_is_named_by_the_line_it_opened_not_read_as_one_long_cell() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let cell = "x".repeat(1 << 20);
        std::fs::write(&path, format!("uuid,persona\na,fine\nb,\"{cell}\nc,lost\n")).unwrap();
        let err = for_each_row(&path, &mut |_| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 3") && err.contains("never closed"),
            "{err}"
        );
    }

    #[test]
    fn a_table_of_only_a_header_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "uuid,age\n").unwrap();
        let err = for_each_row(&path, &mut |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("holds no rows"), "{err}");
    }
}
