//! The hub every collection event goes through: each event gets the next number, the last
//! [`RECENT_EVENTS`] are kept, and a subscriber that names the last event id it saw (SSE's
//! `Last-Event-ID`, sent on reconnecting) gets what came after it before the live ones. An
//! event id is `<epoch>-<number>`, the epoch drawn at start-up, so an id from before a restart
//! is known as such (the numbers start again). Closed at shutdown, which ends every
//! subscription after what was already sent.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::broadcast;

use crate::events::CollectionEvent;

/// Events a slow subscriber may fall behind by before it is told it missed some.
pub const EVENT_BACKLOG: usize = 1024;
/// Events kept for subscribers that reconnect.
pub const RECENT_EVENTS: usize = 4096;

/// An event with its number (from 1, rising; a restarted server starts again).
pub type NumberedEvent = (u64, CollectionEvent);

/// A new subscription.
pub struct Subscription {
    /// The kept events after the id the subscriber named, oldest first.
    pub replay: Vec<NumberedEvent>,
    /// Some events after that id are no longer kept, or the id is not one of this server
    /// process's.
    pub missed: bool,
    pub live: broadcast::Receiver<NumberedEvent>,
}

struct Hub {
    sender: Option<broadcast::Sender<NumberedEvent>>,
    next_id: u64,
    recent: VecDeque<NumberedEvent>,
}

pub struct EventHub {
    epoch: String,
    hub: Mutex<Hub>,
}

impl Default for EventHub {
    fn default() -> Self {
        let epoch = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        Self {
            epoch,
            hub: Mutex::new(Hub {
                sender: Some(broadcast::channel(EVENT_BACKLOG).0),
                next_id: 1,
                recent: VecDeque::new(),
            }),
        }
    }
}

impl EventHub {
    /// The id clients see for event `number`.
    pub fn event_id(&self, number: u64) -> String {
        format!("{}-{number}", self.epoch)
    }

    /// The number of one of this process's event ids.
    fn number_of(&self, event_id: &str) -> Option<u64> {
        let (epoch, number) = event_id.trim().split_once('-')?;
        if epoch == self.epoch {
            number.parse().ok()
        } else {
            None
        }
    }

    /// Numbers an event, keeps it, and sends it to the subscribers there are (none is fine).
    pub fn publish(&self, event: impl Into<CollectionEvent>) {
        let mut hub = self.hub.lock().expect("event hub lock");
        let Some(sender) = hub.sender.clone() else { return };
        let numbered = (hub.next_id, event.into());
        hub.next_id += 1;
        if hub.recent.len() == RECENT_EVENTS {
            hub.recent.pop_front();
        }
        hub.recent.push_back(numbered.clone());
        let _ = sender.send(numbered);
    }

    /// Events from now on, after the kept ones since the event id `last_seen` when it is
    /// given (one from another process, or no id at all, is told it missed some); `None`
    /// once the hub is closed.
    pub fn subscribe(&self, last_seen: Option<&str>) -> Option<Subscription> {
        let hub = self.hub.lock().expect("event hub lock");
        let live = hub.sender.as_ref()?.subscribe();
        let Some(last_seen) = last_seen else {
            return Some(Subscription {
                replay: Vec::new(),
                missed: false,
                live,
            });
        };
        let Some(last_seen) = self.number_of(last_seen) else {
            return Some(Subscription {
                replay: Vec::new(),
                missed: true,
                live,
            });
        };
        let oldest_kept = hub.recent.front().map_or(hub.next_id, |(id, _)| *id);
        let missed = last_seen >= hub.next_id || last_seen + 1 < oldest_kept;
        let replay = if last_seen >= hub.next_id {
            Vec::new()
        } else {
            hub.recent.iter().filter(|(id, _)| *id > last_seen).cloned().collect()
        };
        Some(Subscription { replay, missed, live })
    }

    /// Ends every subscription (after the events already sent) and refuses new ones.
    pub fn close(&self) {
        self.hub.lock().expect("event hub lock").sender.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{FileRef, IngestionEvent};

    fn event(file_id: &str) -> IngestionEvent {
        IngestionEvent::started(&FileRef {
            collection_name: "c".into(),
            job_id: "j".into(),
            file_id: file_id.into(),
            file_name: "a.md".into(),
        })
    }

    fn ids(events: &[NumberedEvent]) -> Vec<u64> {
        events.iter().map(|(id, _)| *id).collect()
    }

    #[tokio::test]
    async fn a_closed_hub_ends_its_subscriptions_after_what_was_sent() {
        let hub = EventHub::default();
        let mut subscription = hub.subscribe(None).unwrap();
        hub.publish(event("f"));
        hub.close();
        let (id, sent) = subscription.live.recv().await.unwrap();
        assert_eq!((id, sent.name()), (1, "document_ingestion_started"));
        assert!(matches!(
            subscription.live.recv().await,
            Err(broadcast::error::RecvError::Closed)
        ));
        assert!(hub.subscribe(None).is_none());
        hub.publish(event("f")); // nobody to hear it: no panic
    }

    #[test]
    fn a_returning_subscriber_gets_what_it_missed() {
        let hub = EventHub::default();
        for i in 0..5 {
            hub.publish(event(&format!("f{i}")));
        }
        let fresh = hub.subscribe(None).unwrap();
        assert!(fresh.replay.is_empty() && !fresh.missed);
        let since = |number: u64| hub.subscribe(Some(&hub.event_id(number))).unwrap();
        let back = since(3);
        assert_eq!((ids(&back.replay), back.missed), (vec![4, 5], false));
        let from_start = since(0);
        assert_eq!(
            (ids(&from_start.replay), from_start.missed),
            (vec![1, 2, 3, 4, 5], false)
        );
        let up_to_date = since(5);
        assert!(up_to_date.replay.is_empty() && !up_to_date.missed);
        let ahead = since(9);
        assert!(
            ahead.replay.is_empty() && ahead.missed,
            "a number this process never gave"
        );
        let restarted = EventHub::default();
        for id in [restarted.event_id(3), "3".into(), "junk".into()] {
            let other = hub.subscribe(Some(&id)).unwrap();
            assert!(
                other.replay.is_empty() && other.missed,
                "{id}: another process's id, or none"
            );
        }

        for i in 0..RECENT_EVENTS {
            hub.publish(event(&format!("g{i}")));
        }
        let late = since(2);
        assert!(late.missed, "events 3 to 5 are no longer kept");
        assert_eq!(late.replay.len(), RECENT_EVENTS);
        assert_eq!(late.replay.first().map(|(id, _)| *id), Some(6));
    }
}
