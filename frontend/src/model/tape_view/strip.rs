//! The tape as a strip to draw, before any pixel: bands of lanes, and columns in Redis's order.
//!
//! One column is one step of Redis's single thread (a [`Slot`](oversold_protocol::tape::Slot)
//! of a run's tape, or one command of the step-through log). A column holds at most one mark
//! per lane; a lane is a buyer, an app server (or a group of them), or for `sharded` a bucket,
//! which gets a band of its own because buckets share no order. Both a run's tape
//! ([`super::from_tape`]) and the step log ([`super::from_step`]) become a [`Strip`], so both
//! are drawn by the one [`super::scene`] in the same visual language.

/// What a mark on the tape is. Writes are drawn tall, everything that changed nothing small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CellKind {
    /// A read of the stock whose value still held when its write ran (or that led to no write).
    Read,
    /// A read that went stale: other writes landed before this buyer's own (or, under SET,
    /// another sale was computed from the same value).
    StaleRead,
    /// A read that showed too little stock: the buyer was refused.
    RefusedRead,
    /// A write that took units that existed.
    Sale,
    /// A write that took units that did not exist (in a later life of the counter: units
    /// sold a second time).
    Phantom,
    /// A sale Redis acknowledged and then lost: the counter that came back does not have it.
    Lost,
    /// An atomic call that found too little stock and changed nothing.
    Refused,
    /// A decrement that went below zero and is not a sale (it gets undone).
    Overshoot,
    /// A write that put units back (the undo of an overshoot).
    Undo,
    /// A write that left the counter where another sale had put it: a lost update.
    Overwrite,
    /// A command Redis answered `nil`: refused, nothing changed (a lost lock race, a
    /// discarded transaction).
    Nil,
    /// Anything else: a lock, a WATCH, a release, a fenced read.
    Other,
}

impl CellKind {
    /// True for marks drawn as a write (tall): they changed the counter, or meant to.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            CellKind::Sale
                | CellKind::Phantom
                | CellKind::Lost
                | CellKind::Overshoot
                | CellKind::Undo
                | CellKind::Overwrite
        )
    }

    /// Which kind an aggregated mark shows when a lane holds several commands of one slot:
    /// the damage first, then sales, then reads.
    pub fn rank(self) -> u8 {
        match self {
            CellKind::Phantom => 11,
            CellKind::Lost => 10,
            CellKind::Overwrite => 9,
            CellKind::StaleRead => 8,
            CellKind::Overshoot => 7,
            CellKind::Sale => 6,
            CellKind::Undo => 5,
            CellKind::Nil => 4,
            CellKind::Read => 3,
            CellKind::Refused => 2,
            CellKind::RefusedRead => 1,
            CellKind::Other => 0,
        }
    }
}

/// One mark: what a lane did in one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// Which lane of its band.
    pub lane: u32,
    /// What it is (for several commands, the one that matters most, see [`CellKind::rank`]).
    pub kind: CellKind,
    /// Commands it stands for (more than one when lanes are app servers or buckets).
    pub count: u32,
    /// A short text for the mark when there is room, e.g. `GET 1` or `DECRBY→-1`.
    pub label: Option<String>,
}

/// One column of the strip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    /// A step of Redis's order.
    Slot(SlotColumn),
    /// Slots not drawn (the zoom folded them, or they did not fit): only how many commands.
    Folded {
        /// Commands in the folded slots.
        commands: u32,
    },
    /// Redis came back with a counter of its own: a divider between two lives of the counter.
    Break {
        /// Where the counter came back (`None`: the key did not come back; it reads as 0).
        came_back_at: Option<i64>,
        /// The divider's words, e.g. `Redis came back at 7 · 5 acknowledged sales lost`.
        label: String,
    },
}

/// A step of Redis's order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlotColumn {
    /// At most one mark per lane, by lane.
    pub marks: Vec<Mark>,
    /// Commands in the slot. Above one, their order among themselves is unknown (and does not
    /// change the counter): the column is drawn as one unordered group.
    pub commands: u32,
    /// True when the slot's place is only partly known (placed by value, no later than, or in
    /// one order among several that explain the replies).
    pub approx: bool,
    /// The counter after the slot, where the replies fix it.
    pub counter: Option<i64>,
    /// True for a drop no answered write explains: writes in doubt landed here.
    pub gap: bool,
}

/// A buyer's read and its write, joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link {
    /// Column of the read.
    pub from_column: u32,
    /// Lane of the read.
    pub from_lane: u32,
    /// Column of the write.
    pub to_column: u32,
    /// Lane of the write.
    pub to_lane: u32,
    /// True when the read had gone stale by the time the write ran.
    pub stale: bool,
}

/// One counter's columns, over its lanes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Band {
    /// The band's name when there are several (`bucket 2`).
    pub label: Option<String>,
    /// One name per lane, top to bottom (`#7`, `app 3`).
    pub lanes: Vec<String>,
    /// The counter before the first column.
    pub initial: Option<i64>,
    /// In Redis's order, left to right.
    pub columns: Vec<Column>,
    /// Reads joined to their writes.
    pub links: Vec<Link>,
    /// The column after which the stock had run out (the marker goes on its right edge).
    pub ran_out: Option<u32>,
}

/// What one lane stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneUnit {
    /// One lane per buyer.
    Buyer,
    /// One lane per app server (Redis connection).
    AppServer,
    /// One lane per `n` app servers.
    AppServers(u32),
    /// One band per bucket (`sharded`).
    Bucket,
}

/// The whole picture, before pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strip {
    /// One band per counter, top to bottom.
    pub bands: Vec<Band>,
    /// What a lane is.
    pub unit: LaneUnit,
    /// Slot columns cut off because a band had more than [`MAX_COLUMNS`].
    pub cut_columns: u32,
}

/// The most columns a band draws; past it the rest fold into one column (a canvas about
/// 2,000 px wide at 4 px a column, so even a phone scrolls a tape it can read).
pub const MAX_COLUMNS: usize = 480;

impl Strip {
    /// Nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.bands.iter().all(|b| b.columns.is_empty())
    }

    /// The most columns in any band: what sets the picture's width.
    pub fn widest(&self) -> usize {
        self.bands
            .iter()
            .map(|b| b.columns.len())
            .max()
            .unwrap_or(0)
    }
}
