//! The `requestState` of an approval round in the stateless revision.
//!
//! A stateless client answers an *ask* by retrying the call with its answer,
//! and the answer is the client's word: without a check, any client could
//! send "allow once" with a call the server never asked about, or replay an
//! approval. So the `input_required` result carries a `requestState` sealed
//! with a key only this server holds (HMAC-SHA256, rmcp's codec), bound to
//! the caller, a digest of the exact call (tool name and arguments, keys in
//! any order) and an expiry, holding a one-time nonce. A retry's answers
//! count only with that state, opened for the same caller and call, within
//! its lifetime, and once.

use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an approval question stays answerable: a person reads the
/// command and decides, so minutes, not seconds.
pub const APPROVAL_TTL: Duration = Duration::from_secs(600);

/// Why a retry's answers are not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateRefusal {
    /// Answers came without any `requestState`.
    Missing,
    /// Forged, altered, or sealed for another caller or another call.
    NotThisCall,
    /// Sealed too long ago.
    Expired,
    /// Already used once.
    Replayed,
}

impl std::fmt::Display for StateRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StateRefusal::Missing => {
                "the approval answer came without the requestState this server sent with its question: retry with it, unchanged"
            }
            StateRefusal::NotThisCall => {
                "the requestState was not sealed by this server for this caller and this exact call (tool and arguments)"
            }
            StateRefusal::Expired => {
                "the requestState has expired: call the tool again to be asked afresh"
            }
            StateRefusal::Replayed => {
                "the requestState was already used: an approval answers one call once"
            }
        })
    }
}

/// Seals approval questions and redeems their answers, once each.
pub struct ApprovalSeal {
    codec: RequestStateCodec,
    ttl: Duration,
    /// Nonces redeemed, until their state would have expired anyway.
    redeemed: Mutex<HashMap<[u8; 16], Instant>>,
}

impl ApprovalSeal {
    /// A seal with a fresh random key (so a restart voids every open
    /// question) and states that live `ttl`.
    ///
    /// # Errors
    /// When the system has no randomness to give.
    pub fn new(ttl: Duration) -> Result<Self, getrandom::Error> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)?;
        let codec = RequestStateCodec::try_new(key.to_vec())
            .expect("a 32-byte key is long enough for the codec");
        Ok(ApprovalSeal {
            codec,
            ttl,
            redeemed: Mutex::new(HashMap::new()),
        })
    }

    /// The `requestState` for a question about this call by this caller.
    pub fn seal(&self, caller: Option<&str>, tool: &str, arguments: &Value) -> String {
        let mut nonce = [0u8; 16];
        // Without randomness every nonce is zero, and then the first redeemed
        // one blocks the others: approvals fail closed, never open.
        let _ = getrandom::fill(&mut nonce);
        let bound = binding(caller, tool, arguments);
        self.codec.seal_with(
            &nonce,
            &SealOptions::new().associated_data(&bound).ttl(self.ttl),
        )
    }

    /// Accepts `state` as the answer's warrant for this call by this caller,
    /// once.
    ///
    /// # Errors
    /// A [`StateRefusal`] saying why not.
    pub fn redeem(
        &self,
        state: Option<&str>,
        caller: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), StateRefusal> {
        let state = state.ok_or(StateRefusal::Missing)?;
        let bound = binding(caller, tool, arguments);
        let nonce = self
            .codec
            .open_with(state, &bound)
            .map_err(|err| match err {
                RequestStateError::Expired => StateRefusal::Expired,
                _ => StateRefusal::NotThisCall,
            })?;
        let nonce: [u8; 16] = nonce
            .as_slice()
            .try_into()
            .map_err(|_| StateRefusal::NotThisCall)?;
        let now = Instant::now();
        let mut redeemed = self
            .redeemed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        redeemed.retain(|_, until| *until > now);
        if redeemed.insert(nonce, now + self.ttl).is_some() {
            return Err(StateRefusal::Replayed);
        }
        Ok(())
    }
}

/// What a state is bound to: the caller and a digest of the call, with the
/// arguments' object keys sorted (a client may re-encode them in another
/// order; the meaning is the same).
fn binding(caller: Option<&str>, tool: &str, arguments: &Value) -> Vec<u8> {
    let mut digest = Sha256::new();
    digest.update(tool.as_bytes());
    digest.update([0]);
    canonical(arguments, &mut digest);
    let mut bound = Vec::new();
    match caller {
        Some(name) => {
            bound.push(1);
            bound.extend_from_slice(name.as_bytes());
        }
        None => bound.push(0),
    }
    bound.push(0);
    bound.extend_from_slice(&digest.finalize());
    bound
}

/// Feeds `value` to the digest with object keys sorted; each part is
/// tagged and length-prefixed, so no two values feed the same bytes.
fn canonical(value: &Value, digest: &mut Sha256) {
    fn text(tag: u8, bytes: &[u8], digest: &mut Sha256) {
        digest.update([tag]);
        digest.update((bytes.len() as u64).to_be_bytes());
        digest.update(bytes);
    }
    match value {
        Value::Null => digest.update([b'n']),
        Value::Bool(b) => digest.update([b'b', u8::from(*b)]),
        Value::Number(n) => text(b'#', n.to_string().as_bytes(), digest),
        Value::String(s) => text(b's', s.as_bytes(), digest),
        Value::Array(items) => {
            digest.update([b'[']);
            digest.update((items.len() as u64).to_be_bytes());
            for item in items {
                canonical(item, digest);
            }
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            digest.update([b'{']);
            digest.update((keys.len() as u64).to_be_bytes());
            for key in keys {
                text(b'k', key.as_bytes(), digest);
                canonical(&map[key], digest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seal() -> ApprovalSeal {
        ApprovalSeal::new(APPROVAL_TTL).unwrap()
    }

    #[test]
    fn a_state_answers_its_own_call_once() {
        let seal = seal();
        let args = json!({"command": "touch made", "timeout": 5});
        let state = seal.seal(Some("alice"), "bash", &args);
        // The same arguments in another key order are the same call.
        let reordered: Value =
            serde_json::from_str(r#"{"timeout":5,"command":"touch made"}"#).unwrap();
        assert_eq!(
            seal.redeem(Some(&state), Some("alice"), "bash", &reordered),
            Ok(())
        );
        assert_eq!(
            seal.redeem(Some(&state), Some("alice"), "bash", &args),
            Err(StateRefusal::Replayed)
        );
    }

    #[test]
    fn another_caller_call_or_an_altered_state_is_refused() {
        let seal = seal();
        let args = json!({"command": "touch made"});
        let state = seal.seal(Some("alice"), "bash", &args);
        let refused = |state: &str, caller: Option<&str>, tool: &str, args: &Value| {
            seal.redeem(Some(state), caller, tool, args)
        };
        assert_eq!(
            refused(&state, Some("bob"), "bash", &args),
            Err(StateRefusal::NotThisCall)
        );
        assert_eq!(
            refused(&state, None, "bash", &args),
            Err(StateRefusal::NotThisCall)
        );
        assert_eq!(
            refused(
                &state,
                Some("alice"),
                "bash",
                &json!({"command": "rm -rf ~"})
            ),
            Err(StateRefusal::NotThisCall)
        );
        assert_eq!(
            refused(&state, Some("alice"), "write", &args),
            Err(StateRefusal::NotThisCall)
        );
        let mut altered = state.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            refused(
                std::str::from_utf8(&altered).unwrap(),
                Some("alice"),
                "bash",
                &args
            ),
            Err(StateRefusal::NotThisCall)
        );
        assert_eq!(
            seal.redeem(None, Some("alice"), "bash", &args),
            Err(StateRefusal::Missing)
        );
        // Another server (another key) cannot vouch for this one.
        let other = ApprovalSeal::new(APPROVAL_TTL).unwrap();
        assert_eq!(
            other.redeem(Some(&state), Some("alice"), "bash", &args),
            Err(StateRefusal::NotThisCall)
        );
        // None of the refusals used the state up.
        assert_eq!(refused(&state, Some("alice"), "bash", &args), Ok(()));
    }

    #[test]
    fn an_expired_state_is_refused() {
        let seal = ApprovalSeal::new(Duration::ZERO).unwrap();
        let args = json!({"command": "touch made"});
        let state = seal.seal(None, "bash", &args);
        // Time passing is what is tested: the codec counts whole milliseconds.
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(
            seal.redeem(Some(&state), None, "bash", &args),
            Err(StateRefusal::Expired)
        );
    }

    #[test]
    fn different_values_digest_differently() {
        let digest = |v: &Value| binding(None, "t", v);
        assert_ne!(digest(&json!(["ab", "c"])), digest(&json!(["a", "bc"])));
        assert_ne!(digest(&json!({"a": "1"})), digest(&json!({"a": 1})));
        assert_ne!(digest(&json!(null)), digest(&json!(false)));
        assert_ne!(
            binding(Some(""), "t", &json!(1)),
            binding(None, "t", &json!(1))
        );
    }
}
