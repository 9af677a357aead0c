//! What the check asks the masters directly: `CONFIG RESETSTAT`, then `INFO
//! commandstats`, the number of calls of each command, scripts (`evalsha`)
//! and the commands they call alike (counts, not times: they do not change
//! with the load on the machine); and the fence counters made level.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::time::Duration;

use anyhow::{Context, bail};

/// Calls per command name (`evalsha`, `incr`, `client|setname`, ...).
pub type Calls = BTreeMap<String, u64>;

/// The bucket fence counters (docs/design.md#keys): `<prefix>:{<tag>}:fence`.
const COUNTERS: &str = "redlockd:{*}:fence";

/// Zeroes the master's command statistics.
pub fn reset(port: u16) -> anyhow::Result<()> {
    match command(port, &["CONFIG", "RESETSTAT"])? {
        Reply::Text(ok) if ok == "OK" => Ok(()),
        other => bail!("CONFIG RESETSTAT on port {port}: {other:?}"),
    }
}

/// The calls counted since the last reset, but this tool's own
/// `CONFIG RESETSTAT` (`INFO` counts itself only once it has answered).
pub fn read(port: u16) -> anyhow::Result<Calls> {
    let Reply::Text(info) = command(port, &["INFO", "commandstats"])? else {
        bail!("INFO commandstats on port {port}: not a text");
    };
    let mut calls = parse(&info);
    calls.remove("config|resetstat");
    Ok(calls)
}

/// Raises every bucket's fence counter to the highest any master holds.
/// Counters start from each master's clock, so they differ, and a grant
/// whose highest counter is not on a majority of the masters that answered
/// first sends the lagging ones the token (round two,
/// docs/design.md#the-fencing-token): calls that depend on which masters
/// answer first. Level counters stay level (every grant adds one on every
/// master), so the measured pass runs no round two.
pub fn level_counters(ports: &[u16]) -> anyhow::Result<()> {
    let mut highest: BTreeMap<String, u64> = BTreeMap::new();
    let mut held = Vec::new();
    for &port in ports {
        let mut counters = BTreeMap::new();
        let keys = strings(command(port, &["KEYS", COUNTERS])?)?;
        if !keys.is_empty() {
            let mut mget = vec!["MGET"];
            mget.extend(keys.iter().map(String::as_str));
            for (key, value) in keys.iter().zip(strings(command(port, &mget)?)?) {
                let n: u64 = value
                    .parse()
                    .with_context(|| format!("{key} = {value:?}: not a counter"))?;
                let top = highest.entry(key.clone()).or_default();
                *top = (*top).max(n);
                counters.insert(key.clone(), n);
            }
        }
        held.push(counters);
    }
    if highest.is_empty() {
        bail!("no fence counter matches {COUNTERS}: did the key layout (docs/design.md#keys) change?");
    }
    for (&port, counters) in ports.iter().zip(&held) {
        let raised: Vec<(&String, String)> = highest
            .iter()
            .filter(|(key, top)| counters.get(*key) != Some(top))
            .map(|(key, top)| (key, top.to_string()))
            .collect();
        if raised.is_empty() {
            continue;
        }
        let mut mset = vec!["MSET"];
        for (key, top) in &raised {
            mset.extend([key.as_str(), top.as_str()]);
        }
        command(port, &mset)?;
    }
    Ok(())
}

/// `cmdstat_evalsha:calls=400,usec=...` lines as `evalsha -> 400`.
fn parse(info: &str) -> Calls {
    info.lines()
        .filter_map(|line| {
            let (name, fields) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = fields.split(',').find_map(|f| f.strip_prefix("calls="))?;
            Some((name.to_owned(), calls.trim().parse().ok()?))
        })
        .collect()
}

/// A reply, as far as this tool needs one.
#[derive(Debug)]
enum Reply {
    Text(String),
    Nil,
    Many(Vec<Reply>),
}

/// An array of strings (a nil where a key is missing: an empty string).
fn strings(reply: Reply) -> anyhow::Result<Vec<String>> {
    let Reply::Many(items) = reply else {
        bail!("not an array: {reply:?}");
    };
    Ok(items
        .into_iter()
        .map(|i| match i {
            Reply::Text(s) => s,
            _ => String::new(),
        })
        .collect())
}

/// One command on a fresh connection.
fn command(port: u16, args: &[&str]) -> anyhow::Result<Reply> {
    let mut stream =
        TcpStream::connect((Ipv4Addr::LOCALHOST, port)).with_context(|| format!("connecting to master :{port}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(request.as_bytes())?;
    let name = args.first().copied().unwrap_or_default();
    reply(&mut BufReader::new(stream)).with_context(|| format!("{name} on master :{port}"))
}

fn reply(reader: &mut impl BufRead) -> anyhow::Result<Reply> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end();
    let (kind, rest) = line.split_at(line.len().min(1));
    let number = || rest.parse::<i64>().with_context(|| format!("a length: {line:?}"));
    Ok(match kind {
        "+" | ":" => Reply::Text(rest.to_owned()),
        "$" if number()? < 0 => Reply::Nil,
        "$" => {
            let mut body = vec![0; usize::try_from(number()?)? + 2];
            reader.read_exact(&mut body)?;
            body.truncate(body.len() - 2);
            Reply::Text(String::from_utf8(body)?)
        }
        "*" => Reply::Many((0..number()?.max(0)).map(|_| reply(reader)).collect::<Result<_, _>>()?),
        _ => bail!("{line}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_of_each_command_are_read() {
        let info = "# Commandstats\r\ncmdstat_evalsha:calls=400,usec=9000,usec_per_call=22.50,\
                    rejected_calls=0,failed_calls=0\r\ncmdstat_client|setname:calls=3,usec=1\r\n";
        let calls = parse(info);
        assert_eq!(calls.get("evalsha"), Some(&400));
        assert_eq!(calls.get("client|setname"), Some(&3));
        assert_eq!(calls.len(), 2);
    }

    #[test]
    fn replies_are_read_whole_and_errors_are_errors() {
        let mut wire: &[u8] = b"*3\r\n$3\r\nabc\r\n$-1\r\n:7\r\n";
        let Reply::Many(items) = reply(&mut wire).unwrap() else {
            panic!("not an array");
        };
        assert!(matches!(&items[..], [Reply::Text(a), Reply::Nil, Reply::Text(n)] if a == "abc" && n == "7"));
        let mut wire: &[u8] = b"-ERR unknown command\r\n";
        assert!(reply(&mut wire).unwrap_err().to_string().contains("unknown command"));
    }
}
