//! The `/ws` WebSocket: one session per socket, at most one run in flight per session.
//!
//! Split as in axum's examples: a send task owns the socket's sink and drains a bounded
//! queue; the session loop reads frames, watches Redis health and the job in flight. A job
//! (one run, or a comparison) is its own task (engine + batcher, in [`job`]) so a slow
//! reader never stalls the buyers, and closing the socket cancels the job, which still
//! cleans up.
//!
//! # Layout
//! - this file: the upgrade (origin check, per-address and global socket caps), the session
//!   loop, the send task.
//! - [`inbound`]: frame parsing and error codes; [`job`]: admission and the run task.
//! - [`batcher`]: outcome batching; [`rate`]: the per-socket token bucket;
//!   [`origin`]: which pages may open a socket.

pub mod admit;
mod at_scale;
mod batcher;
mod host;
pub mod inbound;
pub mod job;
pub mod origin;
mod rate;
pub mod step;
mod workshop;

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use oversold_protocol::{
    ClientMessage, ErrorCode, Explanation, RunRequest, ServerMessage, WireError, text,
};
use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::{Caller, ClientAddr};
use crate::rooms::{self, seat::Seats};
use crate::run::Control;
use crate::state::AppState;

use admit::Job;

/// `admit_run` or `admit_compare`.
type Admit = fn(&AppState, &Caller, &RunRequest) -> Result<Job, WireError>;

/// Largest frame a client may send. A start_run is a few hundred bytes.
const MAX_FRAME_BYTES: usize = 16 * 1024;
/// Frames queued for the socket before producers wait.
const OUTBOUND_QUEUE: usize = 64;
/// Longest one frame may take to go out before the client is deemed gone.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the server pings; a client that has sent nothing (not even a pong) for two of
/// these is gone (a laptop that slept, a phone that lost the network) and is closed.
const PING_EVERY: Duration = Duration::from_secs(20);
/// A socket with no run in flight and no frame from its client for this long is closed, so
/// forgotten tabs do not hold socket slots forever. The page reconnects by itself.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Seconds a client refused for its address's socket cap is asked to wait (`Retry-After`).
const RETRY_AFTER_SECS: &str = "5";

/// `GET /ws`. Refusals happen before upgrading, with a status a browser and a load balancer
/// understand: 403 for another origin, 429 for an address over its share, 503 when the
/// server is full.
pub async fn upgrade(
    ws: WebSocketUpgrade,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    headers: HeaderMap,
    client: ClientAddr,
    State(state): State<Arc<AppState>>,
) -> Response {
    let pages = origin::Pages {
        public: &state.public_origins,
        also: &state.allowed_origins,
    };
    if let Err(why) = origin::check(&headers, &pages) {
        tracing::info!(%why, "refused a WebSocket from another origin");
        return (StatusCode::FORBIDDEN, why).into_response();
    }
    let mine = match state.clients.open_socket(client) {
        Ok(slot) => slot,
        Err(why) => {
            tracing::info!(%client, "refused a WebSocket: address over its socket cap");
            let retry = [(header::RETRY_AFTER, RETRY_AFTER_SECS)];
            return (StatusCode::TOO_MANY_REQUESTS, retry, why).into_response();
        }
    };
    let Ok(slot) = state.socket_slots.clone().try_acquire_owned() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many open connections; try again shortly",
        )
            .into_response();
    };
    ws.max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| async move {
            let caller = Caller {
                addr: client,
                base_url: crate::rooms::qr::base_url(&headers),
            };
            let page = HelloFor::from_query(query.as_deref().unwrap_or(""));
            session(socket, state, caller, page).await;
            drop((slot, mine));
        })
}

/// Which page opened the socket (`/ws?page=…`): `hello` leaves out what that page never
/// shows, so a phone on conference Wi-Fi does not download every Lua source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelloFor {
    /// The lab: everything.
    Lab,
    /// The workshop page: no Lua sources (it shows the exercises' own scripts).
    Workshop,
    /// A phone: neither Lua sources, nor exercises, nor the strategies of scenarios other than
    /// the race, nor the presenter's chaos buttons; and the race's strategies without their
    /// words (a phone names a strategy by its short label only).
    Phone,
    /// A room's projector screen (`page=spectator`, the lab's page drawing a room): what a
    /// phone gets, but with the race strategies' words, which the lab's panels show.
    Spectator,
}

impl HelloFor {
    /// From the socket's query: `page=phone`, `page=spectator`, `page=workshop`; anything
    /// else is the lab.
    pub fn from_query(query: &str) -> HelloFor {
        let mut page = HelloFor::Lab;
        for pair in query.split('&') {
            match pair {
                "page=phone" => page = HelloFor::Phone,
                "page=spectator" => page = HelloFor::Spectator,
                "page=workshop" => page = HelloFor::Workshop,
                _ => {}
            }
        }
        page
    }

    /// `hello` as this page needs it.
    pub fn trim(self, mut hello: oversold_protocol::Hello) -> oversold_protocol::Hello {
        if self != HelloFor::Lab {
            hello.scripts.clear();
            hello.presets.clear();
        }
        if self == HelloFor::Phone {
            // Nor any strategy's description, explanation or scripts: those words were most
            // of a phone's greeting (23 of its 25 KB), on the slowest link in the room.
            for s in &mut hello.strategies {
                let about = &mut s.about;
                about.description = text("");
                about.scripts = Cow::Borrowed(&[]);
                about.explanation = Explanation {
                    title: text(""),
                    how: text(""),
                    why: text(""),
                    cost: text(""),
                    steps: Cow::Borrowed(&[]),
                };
            }
        }
        if matches!(self, HelloFor::Phone | HelloFor::Spectator) {
            // A room's sale is a race: neither screen shows another scenario's strategies,
            // the exercises or the presenter's chaos buttons.
            hello.chaos.clear();
            hello.exercises.clear();
            hello.checkout_strategies.clear();
            hello.cart_strategies.clear();
            hello.busy_strategies.clear();
            hello.durability_strategies.clear();
            hello.eviction_strategies.clear();
            hello.failover_strategies.clear();
        }
        hello
    }
}

/// The job this session has in flight.
struct InFlight {
    /// Its run id, or its compare id.
    id: String,
    cancel: CancellationToken,
    /// Cancelled by the job just before its last frame, once it holds nothing.
    ended: CancellationToken,
    /// Where `reconcile` requests go, for a checkout job.
    control: Option<mpsc::Sender<Control>>,
}

/// `reconcile` requests a checkout job may have waiting at once; more are refused.
const PENDING_RECONCILES: usize = 2;

/// Everything one socket's session keeps between frames: what the session loop's branches
/// read and change.
struct Session {
    state: Arc<AppState>,
    caller: Caller,
    /// The send task's queue.
    frames: mpsc::Sender<ServerMessage>,
    /// Asks the send task to close with a code; taken by the first ask.
    close: Option<oneshot::Sender<CloseFrame>>,
    limiter: rate::Limiter,
    /// The job in flight runs here (at most one).
    jobs: JoinSet<()>,
    in_flight: Option<InFlight>,
    stepping: Option<step::StepSlot>,
    seat: Seats,
    /// The audit record of this socket's latest race at scale.
    audit: at_scale::Shelf,
    /// When the client last sent anything (a pong counts).
    last_heard: Instant,
}

/// One socket, from its `hello` to its close.
///
/// The loop stays one `tokio::select!`: it is the one place that shows everything a session
/// waits for at once. Each branch's work is a [`Session`] method.
async fn session(socket: WebSocket, state: Arc<AppState>, caller: Caller, page: HelloFor) {
    let (sink, mut stream) = socket.split();
    let (frames, queue) = mpsc::channel::<ServerMessage>(OUTBOUND_QUEUE);
    let (close, close_requested) = oneshot::channel();
    let mut writer = tokio::spawn(send_task(sink, queue, close_requested));

    let _ = frames
        .send(ServerMessage::Hello(Box::new(page.trim(state.hello()))))
        .await;
    let mut health = state.health.clone();
    health.mark_unchanged();
    let mut session = Session {
        state,
        caller,
        frames,
        close: Some(close),
        limiter: rate::Limiter::default(),
        jobs: JoinSet::new(),
        in_flight: None,
        stepping: None,
        seat: Seats::default(),
        audit: at_scale::Shelf::default(),
        last_heard: Instant::now(),
    };
    let mut liveness = tokio::time::interval_at(Instant::now() + PING_EVERY, PING_EVERY);

    loop {
        tokio::select! {
            frame = stream.next() => {
                if session.on_frame(frame).await.is_break() {
                    break;
                }
            }
            Some(_) = session.jobs.join_next() => session.in_flight = None,
            Ok(()) = health.changed() => {
                let redis = health.borrow_and_update().state;
                let _ = session.frames.send(ServerMessage::RedisStatus { redis }).await;
            }
            // The send task pings every PING_EVERY; a live client answers with a pong.
            _ = liveness.tick() => {
                if session.on_liveness_tick().await.is_break() {
                    break;
                }
            }
            // The writer gave up (or the socket broke): nothing more can reach the client.
            _ = &mut writer => break,
            // The close itself waits until the job's terminal frame has gone out (`end`).
            _ = session.state.shutdown.cancelled() => break,
        }
    }
    session.end(writer).await;
}

impl Session {
    /// One read from the client: answer a frame, or `Break` when the socket is done.
    async fn on_frame(&mut self, frame: Option<Result<Message, axum::Error>>) -> ControlFlow<()> {
        let frame = match frame {
            Some(Ok(Message::Close(_))) | None => return ControlFlow::Break(()),
            Some(Err(e)) => {
                if is_too_big(e) {
                    // Say why, with the code made for it, instead of a bare close.
                    let reason = format!("frames are limited to {} KiB", MAX_FRAME_BYTES / 1024);
                    self.ask_to_close(close_code::SIZE, reason);
                }
                return ControlFlow::Break(());
            }
            Some(Ok(frame)) => frame,
        };
        self.last_heard = Instant::now();
        // Every frame counts, whatever its kind: pings and binary frames cost the server
        // work too. A refused request still gets its one answer (an answer per request
        // amplifies nothing); a client that keeps sending far past its budget is closed.
        let verdict = self.limiter.check();
        if verdict == rate::Verdict::Close {
            tracing::info!(client = %self.caller.addr, "closing a socket that flooded frames");
            let reason = "too many frames, far past the limit".to_string();
            self.ask_to_close(close_code::POLICY, reason);
            return ControlFlow::Break(());
        }
        let text = match frame {
            Message::Text(t) => t,
            // Not a request, so nothing is owed: a refused one gets no answer.
            _ if verdict == rate::Verdict::Refuse => return ControlFlow::Continue(()),
            Message::Binary(_) => {
                let e = WireError::new(
                    ErrorCode::BadJson,
                    "binary frames are not supported; send JSON text",
                );
                send_error(&self.frames, e).await;
                return ControlFlow::Continue(());
            }
            _ => return ControlFlow::Continue(()), // ping (answered by the library) or pong
        };
        if verdict == rate::Verdict::Refuse {
            let e = WireError::new(
                ErrorCode::RateLimited,
                "too many frames; slow down (this request was not carried out)",
            );
            send_error(&self.frames, e).await;
            return ControlFlow::Continue(());
        }
        match inbound::parse(&text) {
            Ok(msg) => self.dispatch(msg).await,
            Err(e) => send_error(&self.frames, e).await,
        }
        ControlFlow::Continue(())
    }

    /// Every [`PING_EVERY`]: close an idle step-through, and `Break` when the client has
    /// gone silent (or idle with nothing in flight).
    async fn on_liveness_tick(&mut self) -> ControlFlow<()> {
        if self.stepping.as_ref().is_some_and(step::StepSlot::idle)
            && let Some(closed) = step::close(&self.state, &mut self.stepping).await
        {
            let _ = self.frames.send(closed).await;
        }
        let silent = self.last_heard.elapsed();
        // A phone or projector in a room listens without talking: not idle.
        let idle = self.in_flight.is_none() && !self.seat.is_seated() && silent >= IDLE_TIMEOUT;
        if silent >= 2 * PING_EVERY || idle {
            tracing::debug!(silent_s = silent.as_secs(), "closing a silent socket");
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// Ask the send task (the socket's only writer) to close with `code`. It sends the Close
    /// frame itself, so it never races a data frame on the socket.
    fn ask_to_close(&mut self, code: u16, reason: String) {
        if let Some(close) = self.close.take() {
            let _ = close.send(CloseFrame {
                code,
                reason: reason.into(),
            });
        }
    }

    /// The socket is gone (or the server is stopping): stop the job, but let it clean up;
    /// then leave the step-through and the room, and let the writer finish.
    async fn end(mut self, writer: JoinHandle<()>) {
        if let Some(job) = &self.in_flight {
            job.cancel.cancel();
        }
        // Sends fail fast once the writer is gone, so this cannot hang on a dead client.
        while self.jobs.join_next().await.is_some() {}
        step::close_quietly(&self.state, &mut self.stepping).await;
        let host: Arc<dyn rooms::Host> = self.state.clone();
        rooms::seat::leave(&host, &mut self.seat).await;
        if self.state.shutdown.is_cancelled() {
            // The job's terminal frame (run_cancelled) is queued by now. A close asked for
            // wins over the queue in the send task, so let the queue empty first: a client
            // hears how its run ended, then why the socket closes.
            let sent = wait_until_sent(&self.frames, &writer);
            let _ = tokio::time::timeout(SEND_TIMEOUT, sent).await;
            self.ask_to_close(close_code::AWAY, "the server is shutting down".into());
        }
        drop(self.frames);
        if !writer.is_finished() {
            let _ = writer.await;
        }
    }

    /// One request from the client, parsed once. The match names every message, so a new
    /// one cannot land in another's arm (an unknown or misplaced message gets its own error
    /// and never closes a step-through or a room seat on the way).
    async fn dispatch(&mut self, msg: ClientMessage) {
        // A job that is sending its last frame is over for the client, which may answer that
        // frame at once: wait for the task's last instant, so that answer meets an idle socket.
        if self
            .in_flight
            .as_ref()
            .is_some_and(|job| job.ended.is_cancelled())
        {
            self.jobs.join_next().await;
            self.in_flight = None;
        }
        let (state, caller) = (&self.state, &self.caller);
        let answer = match msg {
            ClientMessage::StartRun { config } => {
                return self.admit(admit::admit_run, &config).await;
            }
            ClientMessage::StartCompare { config } => {
                return self.admit(admit::admit_compare, &config).await;
            }
            ClientMessage::CancelRun => return self.cancel_run().await,
            ClientMessage::Reconcile => match reconcile(self.in_flight.as_ref()) {
                Some(e) => ServerMessage::Error(e),
                None => return, // the job answers with `reconciled` itself
            },
            ClientMessage::AuditPage {
                run_id,
                from,
                count,
            } => match self.audit.page(&run_id, from, count) {
                Ok(rows) => ServerMessage::AuditRows(rows),
                Err(e) => ServerMessage::Error(e),
            },
            ClientMessage::StepOpen { config } => {
                step::open(state, caller, &config, &mut self.stepping).await
            }
            ClientMessage::Step { buyer } => step::step(buyer, &mut self.stepping).await,
            ClientMessage::StepReset => step::reset(state, caller, &mut self.stepping).await,
            ClientMessage::StepClose => match step::close(state, &mut self.stepping).await {
                Some(closed) => closed,
                None => ServerMessage::Error(WireError::new(
                    ErrorCode::NoRunInProgress,
                    "no step-through is open",
                )),
            },
            ClientMessage::CheckSolution { exercise, source } => {
                return workshop::check(state, caller, &exercise, source, &self.frames).await;
            }
            room @ (ClientMessage::CreateRoom
            | ClientMessage::JoinRoom { .. }
            | ClientMessage::OpenSale { .. }
            | ClientMessage::Buy { .. }
            | ClientMessage::CloseSale { .. }
            | ClientMessage::Chaos { .. }
            | ClientMessage::OpenChallenge { .. }
            | ClientMessage::SubmitChallenge { .. }
            | ClientMessage::ShowCounterexample { .. }) => {
                let host: Arc<dyn rooms::Host> = self.state.clone();
                rooms::seat::handle(&host, caller, room, &self.frames, &mut self.seat).await;
                return;
            }
        };
        let _ = self.frames.send(answer).await;
    }

    /// `start_run` or `start_compare`: refused while a job is in flight, else admitted (or
    /// refused) by `admit`, and started.
    async fn admit(&mut self, admit: Admit, request: &RunRequest) {
        if let Some(job) = &self.in_flight {
            let mut e = WireError::new(
                ErrorCode::RunInProgress,
                "this connection already has a run in flight; wait for its end or send cancel_run",
            );
            e.run_id = Some(job.id.clone());
            return send_error(&self.frames, e).await;
        }
        match admit(&self.state, &self.caller, request) {
            Err(e) => send_error(&self.frames, e).await,
            Ok(job) => {
                let outlet = job::Outlet {
                    frames: self.frames.clone(),
                    audit: self.audit.clone(),
                };
                self.in_flight = Some(start(&self.state, &mut self.jobs, job, outlet));
            }
        }
    }

    /// `cancel_run`: cancel the job in flight, or say there is none.
    async fn cancel_run(&self) {
        match &self.in_flight {
            Some(job) => job.cancel.cancel(),
            None => {
                let e = WireError::new(
                    ErrorCode::NoRunInProgress,
                    "there is no run in flight to cancel",
                );
                send_error(&self.frames, e).await;
            }
        }
    }
}

/// True when a read failed because the client's frame was over [`MAX_FRAME_BYTES`].
fn is_too_big(e: axum::Error) -> bool {
    matches!(
        e.into_inner().downcast_ref::<tungstenite::Error>(),
        Some(tungstenite::Error::Capacity(_))
    )
}

/// Pass a `reconcile` to the checkout job in flight; the error to send when there is none
/// (the job answers with `reconciled` itself).
fn reconcile(in_flight: Option<&InFlight>) -> Option<WireError> {
    let not_now = |why: &str| Some(WireError::new(ErrorCode::NoRunInProgress, why));
    let Some(job) = in_flight else {
        return not_now("reconcile works during a checkout run, and none is in flight");
    };
    let Some(control) = &job.control else {
        return not_now("reconcile works during a checkout run; the run in flight is a race");
    };
    match control.try_send(Control::Reconcile) {
        Ok(()) => None,
        Err(mpsc::error::TrySendError::Full(_)) => Some(WireError::new(
            ErrorCode::RateLimited,
            "a reconcile is already waiting to run; wait for its answer",
        )),
        Err(mpsc::error::TrySendError::Closed(_)) => not_now("the checkout run has just ended"),
    }
}

/// Spawn an admitted job on the session's task set.
fn start(state: &Arc<AppState>, jobs: &mut JoinSet<()>, job: Job, outlet: job::Outlet) -> InFlight {
    let cancel = state.shutdown.child_token();
    let ended = CancellationToken::new();
    let run_id = crate::run::new_id("r");
    let id = job.id(&run_id);
    let (control, requests) = mpsc::channel(PENDING_RECONCILES);
    let control = job.is_checkout().then_some(control);
    jobs.spawn(job::run_job(
        state.clone(),
        job,
        run_id,
        outlet,
        cancel.clone(),
        ended.clone(),
        requests,
    ));
    InFlight {
        id,
        cancel,
        ended,
        control,
    }
}

/// The send task: the only writer of the socket. A client that stops reading would
/// otherwise block it forever, then the queue, then the job, which would keep its run slot:
/// after [`SEND_TIMEOUT`] on one frame the socket is given up instead. It also pings every
/// [`PING_EVERY`], so a live client always has something to answer, and closes with the
/// code the session asks for on `close` (a session that ends without asking gets a plain
/// close).
async fn send_task(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut queue: mpsc::Receiver<ServerMessage>,
    mut close: oneshot::Receiver<CloseFrame>,
) {
    let mut ping = tokio::time::interval_at(Instant::now() + PING_EVERY, PING_EVERY);
    let last = loop {
        let frame = tokio::select! {
            // A close the session asked for wins over a queue that just ended with it.
            biased;
            Ok(frame) = &mut close => break Message::Close(Some(frame)),
            msg = queue.recv() => match msg {
                Some(msg) => {
                    let text = serde_json::to_string(&msg).expect("protocol types always serialize");
                    Message::Text(Utf8Bytes::from(text))
                }
                None => break Message::Close(None),
            },
            _ = ping.tick() => Message::Ping(Default::default()),
        };
        match tokio::time::timeout(SEND_TIMEOUT, sink.send(frame)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(_) => {
                tracing::warn!("client stopped reading; closing its socket");
                return;
            }
        }
    };
    // Bounded like every other send: a client that stopped reading cannot hold this task.
    let _ = tokio::time::timeout(SEND_TIMEOUT, async {
        let _ = sink.send(last).await;
        let _ = sink.close().await;
    })
    .await;
}

/// Until the send task has taken every queued frame (or has ended).
async fn wait_until_sent(frames: &mpsc::Sender<ServerMessage>, writer: &JoinHandle<()>) {
    while frames.capacity() < frames.max_capacity() && !writer.is_finished() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn send_error(frames: &mpsc::Sender<ServerMessage>, e: WireError) {
    let _ = frames.send(ServerMessage::Error(e)).await;
}
