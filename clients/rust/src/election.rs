//! `redlockd.v1.Election` on the client (docs/design.md#elections):
//! campaign, who leads, observe, and proclaim, resign and participants by
//! term.

use crate::campaign::{self, CampaignOptions, Leadership};
use crate::client::{Client, MAX_RESOURCE_BYTES, printable};
use crate::error::Error;
use crate::proto::{LeaderRequest, ObserveRequest, ParticipantsRequest, ProclaimRequest, ResignRequest};
use crate::views::{Leader, LeaderStream};

/// The longest candidate name and value, in bytes (as the daemon).
const MAX_CANDIDATE_BYTES: usize = 256;
const MAX_VALUE_BYTES: usize = 4096;

impl Client {
    /// Campaigns for `election` as `candidate` (a pod name, 1 to 256
    /// bytes): waits in the election's queue, however long it takes, and
    /// resolves once elected. Dropping the future withdraws the candidacy;
    /// wrap it in `tokio::time::timeout` to bound the wait.
    ///
    /// # Errors
    /// `InvalidArgument` (checked before sending when possible), `NotAcquired`
    /// when the daemon ended the candidacy before it led (shutting down),
    /// `Unavailable`, and the other statuses.
    pub async fn campaign(
        &self,
        election: &str,
        candidate: &str,
        options: CampaignOptions,
    ) -> Result<Leadership, Error> {
        check_election(election)?;
        printable("candidate", candidate, 1, MAX_CANDIDATE_BYTES)?;
        check_value(&options.value)?;
        campaign::open(self, election, candidate, options).await
    }

    /// Who leads `election` now, as a majority of the masters agree
    /// (`None`: nobody). A view: it may have changed by the time it arrives.
    ///
    /// # Errors
    /// `Unavailable` without a majority; the other statuses.
    pub async fn leader(&self, election: &str) -> Result<Option<Leader>, Error> {
        check_election(election)?;
        let request = LeaderRequest {
            election: election.to_owned(),
        };
        Ok(Leader::from_wire(self.elections().leader(request).await?.into_inner()))
    }

    /// Follows `election`: the state now first, then every change (a new
    /// leader, a new value, nobody); terms never go back. A view, not a
    /// lock. The stream ends with an error item if the daemon goes away:
    /// observe again.
    ///
    /// # Errors
    /// The daemon's status when it refuses the stream.
    pub async fn observe(&self, election: &str) -> Result<LeaderStream, Error> {
        check_election(election)?;
        let request = ObserveRequest {
            election: election.to_owned(),
        };
        Ok(LeaderStream::new(self.elections().observe(request).await?.into_inner()))
    }

    /// Sets the leader's value from outside its campaign, if `term` still
    /// leads.
    ///
    /// # Errors
    /// `FailedPrecondition` naming the current term when `term` does not
    /// lead (nothing changes); the other statuses.
    pub async fn proclaim(&self, election: &str, term: u64, value: impl Into<Vec<u8>>) -> Result<(), Error> {
        check_election(election)?;
        let value = value.into();
        check_value(&value)?;
        let request = ProclaimRequest {
            election: election.to_owned(),
            term,
            value,
        };
        self.elections().proclaim(request).await?;
        Ok(())
    }

    /// Ends the leadership of `term`, if it still leads: its campaign is
    /// told RESIGNED (at once on this daemon, at its next extension on
    /// another).
    ///
    /// # Errors
    /// `FailedPrecondition` naming the current term when `term` does not
    /// lead (nothing changes); the other statuses.
    pub async fn resign(&self, election: &str, term: u64) -> Result<(), Error> {
        check_election(election)?;
        let request = ResignRequest {
            election: election.to_owned(),
            term,
        };
        self.elections().resign(request).await?;
        Ok(())
    }

    /// The candidates THIS daemon queues for `election`, next first (each
    /// daemon keeps its own queue; a leader is no longer queued).
    ///
    /// # Errors
    /// The daemon's status.
    pub async fn participants(&self, election: &str) -> Result<Vec<String>, Error> {
        check_election(election)?;
        let request = ParticipantsRequest {
            election: election.to_owned(),
        };
        Ok(self.elections().participants(request).await?.into_inner().candidates)
    }
}

/// An election's name follows a resource's rule (in a namespace of its own).
fn check_election(election: &str) -> Result<(), Error> {
    printable("election", election, 1, MAX_RESOURCE_BYTES)
}

/// A leader's value: at most 4096 bytes, anything.
pub(crate) fn check_value(value: &[u8]) -> Result<(), Error> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(Error::InvalidArgument(format!(
            "invalid value: is {} bytes long; at most {MAX_VALUE_BYTES} are allowed",
            value.len()
        )));
    }
    Ok(())
}
