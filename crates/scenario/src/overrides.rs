//! Dotted-path overrides of a scenario (`ccsim run X.toml --set run.seed=7`, Python's
//! `Scenario.set`): each sets one value in the TOML document before it is parsed, so an
//! overridden value is checked exactly as if it had been written in the file, with the same
//! message naming the same field.

use crate::error::{Error, Result};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, TableLike, Value};

/// One override: a field's dotted path (`tcp.cc`, `queues.q.classes[0].k`, `flows[1].start`) and
/// its new value as a TOML literal (`30`, `true`, `"10us"`); a value that is not a TOML literal
/// is taken as a string, so `--set tcp.cc=dctcp` works without quotes.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub path: String,
    pub value: String,
}

impl Override {
    /// `PATH=VALUE`, as `--set` takes it.
    pub fn parse(s: &str) -> Result<Override> {
        let (path, value) = s.split_once('=').ok_or_else(|| {
            Error::new("", format!("override `{s}` is not PATH=VALUE, e.g. run.seed=7 or tcp.cc=dctcp"))
        })?;
        let path = path.trim();
        if path.is_empty() {
            return Err(Error::new("", format!("override `{s}` names no field")));
        }
        Ok(Override { path: path.to_string(), value: value.trim().to_string() })
    }

    /// The value as TOML: a literal where it parses as one, else a string.
    fn toml_value(&self) -> Value {
        match self.value.parse::<Value>() {
            Ok(v) => v.decorated(" ", ""),
            Err(_) => Value::from(self.value.as_str()).decorated(" ", ""),
        }
    }
}

/// One step of a path: a key, and an index when the key names an array.
struct Step<'a> {
    key: &'a str,
    index: Option<usize>,
}

fn steps<'a>(o: &'a Override) -> Result<Vec<Step<'a>>> {
    let bad = || Error::new(&o.path, "not a field path; write keys separated by dots, arrays indexed as flows[0]");
    o.path
        .split('.')
        .map(|part| match part.split_once('[') {
            None if !part.is_empty() => Ok(Step { key: part, index: None }),
            None => Err(bad()),
            Some((key, rest)) => {
                let i = rest.strip_suffix(']').and_then(|n| n.parse::<usize>().ok()).ok_or_else(bad)?;
                if key.is_empty() {
                    return Err(bad());
                }
                Ok(Step { key, index: Some(i) })
            }
        })
        .collect()
}

/// `text` with every override applied in order (later ones win), ready for `parse`; a path
/// through a value, or an index past an array's end, is an error naming the path.
pub fn apply_overrides(text: &str, file: &str, sets: &[Override]) -> Result<String> {
    if sets.is_empty() {
        return Ok(text.to_string());
    }
    // A file that is not TOML fails here as `parse` would have failed it.
    let mut doc = text.parse::<DocumentMut>().map_err(|_| match crate::parse(text, file) {
        Err(e) => e,
        Ok(_) => Error::new("", "not a TOML document").in_file(file),
    })?;
    for o in sets {
        let path = steps(o)?;
        set_in(doc.as_table_mut(), &path, o.toml_value(), o).map_err(|e| e.in_file(file))?;
    }
    Ok(doc.to_string())
}

fn set_in(t: &mut dyn TableLike, path: &[Step], value: Value, o: &Override) -> Result<()> {
    let (step, rest) = path.split_first().expect("a path has a step");
    if rest.is_empty() && step.index.is_none() {
        match t.get_mut(step.key) {
            Some(Item::Value(v)) => {
                let decor = v.decor().clone();
                *v = value;
                *v.decor_mut() = decor;
            }
            Some(item @ Item::None) => *item = Item::Value(value),
            Some(_) => return Err(Error::new(&o.path, "is a table; set one of its fields")),
            None => {
                t.insert(step.key, Item::Value(value));
            }
        }
        return Ok(());
    }
    if t.get(step.key).is_none() {
        if let Some(i) = step.index {
            return Err(Error::new(&o.path, format!("`{}` has no element {i}: the scenario has none", step.key)));
        }
        let mut new = Table::new();
        new.set_implicit(true);
        t.insert(step.key, Item::Table(new));
    }
    let item = t.get_mut(step.key).expect("present or just inserted");
    match step.index {
        None => match item.as_table_like_mut() {
            Some(inner) => set_in(inner, rest, value, o),
            None => Err(Error::new(&o.path, format!("`{}` is a value, not a table", step.key))),
        },
        Some(i) => {
            let len = match &*item {
                Item::ArrayOfTables(a) => a.len(),
                Item::Value(Value::Array(a)) => a.len(),
                _ => return Err(Error::new(&o.path, format!("`{}` is not an array", step.key))),
            };
            if i >= len {
                return Err(Error::new(
                    &o.path,
                    format!(
                        "`{}` has {len} element(s), so index {i} is out of range (0 to {})",
                        step.key,
                        len.max(1) - 1
                    ),
                ));
            }
            match item {
                Item::ArrayOfTables(a) => set_in_table_array(a, i, rest, value, o),
                Item::Value(Value::Array(a)) => {
                    let el = a.get_mut(i).expect("checked length");
                    if rest.is_empty() {
                        let decor = el.decor().clone();
                        *el = value;
                        *el.decor_mut() = decor;
                        return Ok(());
                    }
                    match el {
                        Value::InlineTable(inner) => set_in(inner, rest, value, o),
                        _ => Err(Error::new(&o.path, format!("`{}[{i}]` is a value, not a table", step.key))),
                    }
                }
                _ => unreachable!("checked above"),
            }
        }
    }
}

fn set_in_table_array(a: &mut ArrayOfTables, i: usize, rest: &[Step], value: Value, o: &Override) -> Result<()> {
    if rest.is_empty() {
        return Err(Error::new(&o.path, "is a table; set one of its fields"));
    }
    set_in(a.get_mut(i).expect("checked length"), rest, value, o)
}

/// A scenario given as JSON (Python's `Scenario.from_dict`) written as TOML text, so that it is
/// parsed and checked as a file is.
pub fn toml_from_json(json: &str) -> Result<String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| Error::new("", format!("not a scenario dictionary: {e}")))?;
    if !v.is_object() {
        return Err(Error::new("", "a scenario is a dictionary of tables (run, topology, flows, ...)"));
    }
    toml::to_string(&v).map_err(|e| Error::new("", format!("cannot be written as TOML: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, sets: &[&str]) -> Result<String> {
        let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
        apply_overrides(text, "t.toml", &sets)
    }

    #[test]
    fn values_tables_and_arrays() {
        let text = "[run]\nseed = 1 # the seed\n\n[[flows]]\nname = \"a\"\n\n[queues.q]\nclasses = [{ limit = 5 }]\n";
        let out =
            set(text, &["run.seed=7", "flows[0].start=\"1s\"", "queues.q.classes[0].limit=9", "tcp.cc=dctcp"]).unwrap();
        assert!(out.contains("seed = 7 # the seed"), "{out}");
        assert!(out.contains("start = \"1s\""), "{out}");
        assert!(out.contains("limit = 9"), "{out}");
        assert!(out.contains("[tcp]") && out.contains("cc = \"dctcp\""), "{out}");
    }

    #[test]
    fn bad_paths_are_named() {
        let text = "[run]\nseed = 1\n[[flows]]\nname = \"a\"\n";
        let e = set(text, &["flows[3].start=1"]).unwrap_err();
        assert_eq!(e.field, "flows[3].start");
        assert!(e.msg.contains("out of range"), "{}", e.msg);
        let e = set(text, &["run.seed.x=1"]).unwrap_err();
        assert!(e.msg.contains("not a table"), "{}", e.msg);
        assert!(Override::parse("run.seed").is_err());
        let e = set(text, &["run..seed=1"]).unwrap_err();
        assert_eq!(e.field, "run..seed");
    }
}
