//! What one relay pass did, counted by outcome.

/// What one pass over the due events did.
///
/// ```
/// let s = examples::outbox::PassStats::default();
/// assert_eq!(s.handled(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Events published.
    pub published: u32,
    /// Events that failed and were given a next attempt time.
    pub rescheduled: u32,
    /// Events dead-lettered.
    pub dead: u32,
    /// Publish calls made, short retries included.
    pub calls: u32,
    /// Outcomes not written because the lease had run out and another relay
    /// had claimed the event (it publishes it again: a duplicate).
    pub lease_lost: u32,
    /// Claimed events handed back unattempted: too little of their lease
    /// was left to start a publish.
    pub released: u32,
    /// Claimed events the circuit breaker held back (it refused the publish,
    /// so nothing was sent): handed back, due when it lets calls through.
    pub held_back: u32,
}

impl PassStats {
    /// Events handled in the pass.
    ///
    /// ```
    /// let s = examples::outbox::PassStats { published: 1, rescheduled: 2, dead: 3, calls: 9, ..Default::default() };
    /// assert_eq!(s.handled(), 6);
    /// ```
    pub const fn handled(&self) -> u32 {
        self.published + self.rescheduled + self.dead
    }

    /// Events claimed in the pass, whatever came of them.
    ///
    /// ```
    /// let s = examples::outbox::PassStats { published: 1, lease_lost: 1, released: 2, held_back: 3, ..Default::default() };
    /// assert_eq!(s.claimed(), 7);
    /// ```
    pub const fn claimed(&self) -> u32 {
        self.handled() + self.lease_lost + self.released + self.held_back
    }
}
