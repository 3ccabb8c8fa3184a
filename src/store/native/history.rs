//! What the history says of this client's prompts and follow-ups (SPEC §14.1): which user
//! messages are the server's and which this client's optimistic copies, and which prompt or
//! follow-up a server's message is (by its nonce, or by counting its text where the server
//! names none). Questions over the session alone, asked by its native machines.

use super::*;

impl Session {
    /// An optimistic message of this client's (a prompt's, a held turn's), not the server's.
    pub(in crate::store) fn is_local(&self, id: &str) -> bool {
        let s = self;
        let held = matches!(&s.turn.phase, Phase::Held(h) if h.bubble.as_ref().is_some_and(|b| b.id == id));
        held || s.native.prompts.iter().any(|p| p.bubble.id == id)
    }

    /// The server's user messages with `text` in the history: this client's optimistic ones
    /// (its prompts', a held turn's) left out.
    pub(in crate::store) fn server_texts(&self, text: &str) -> usize {
        (self.conversation.history().messages().iter())
            .filter(|m| m.role == Role::User && !self.is_local(&m.id) && m.text() == text)
            .count()
    }

    /// The history holds a user message sent with this nonce.
    pub(in crate::store) fn committed(&self, nonce: &str) -> bool {
        !self.committed_of(&[nonce]).is_empty()
    }

    /// Of `nonces`, those the history holds a user message sent with: one pass over it.
    pub(in crate::store) fn committed_of(&self, nonces: &[&str]) -> Vec<String> {
        let history = self.conversation.history().messages();
        let sent = history
            .iter()
            .filter(|m| m.role == Role::User)
            .filter_map(|m| {
                let v = m.metadata.as_deref()?.get("clientNonce")?.as_str()?;
                nonces.contains(&v).then(|| v.to_string())
            });
        sent.collect()
    }

    /// An error the link said no longer holds: gone from the snapshot if it is the one shown
    /// (never another, such as a turn's). Whether it went.
    pub(in crate::store) fn unsay(&mut self, said: Option<ChatError>) -> bool {
        let shown = said.is_some() && self.error == said;
        if shown {
            self.error = None;
        }
        shown
    }

    /// The history holds the user message of this client's last prompt.
    pub(in crate::store) fn prompt_ran(&self) -> bool {
        let Some(nonce) = self.turn.client_turn_id.as_deref() else {
            return false;
        };
        let sent = self.native.prompts.iter().position(|p| p.nonce == nonce);
        self.committed(nonce) || sent.is_some_and(|i| self.prompt_message(i).is_some())
    }

    /// The history holds the user message of this client's last prompt with its nonce. An
    /// event asks this, not [`prompt_ran`](Self::prompt_ran): the store reads the history
    /// after a whole batch of events, so a message of the prompt's text later in the batch
    /// (its run, after the one whose end this is) would count already.
    pub(in crate::store) fn prompt_ran_by_nonce(&self) -> bool {
        let nonce = self.turn.client_turn_id.as_deref();
        nonce.is_some_and(|n| self.committed(n))
    }

    /// The server's user message of the prompt `prompts[i]` in the history: the one with its
    /// nonce, or, where the server named none, the one more of its text than there were when
    /// it was sent (after this client's earlier prompts of that text).
    pub(in crate::store) fn prompt_message(&self, i: usize) -> Option<String> {
        let prompts = &self.native.prompts;
        let p = &prompts[i];
        let users = self.conversation.history().messages().iter();
        let users = users.filter(|m| m.role == Role::User);
        let by_nonce = users.clone().find(|m| {
            let meta = m.metadata.as_deref();
            meta.and_then(|v| v.get("clientNonce")?.as_str()) == Some(p.nonce.as_str())
        });
        if let Some(m) = by_nonce {
            return Some(m.id.clone());
        }
        let text = p.bubble.text();
        let ahead = prompts[..i]
            .iter()
            .filter(|e| e.bubble.text() == text)
            .count();
        users
            .filter(|m| !self.is_local(&m.id) && m.text() == text)
            .nth(p.texts_before + ahead)
            .map(|m| m.id.clone())
    }

    /// Of the follow-ups `nonces` the server may have held, those its history shows ran:
    /// by nonce where the messages carry one, else by counting the messages of each text
    /// against what the history held before the item was queued (FIFO among items of one
    /// text).
    pub(in crate::store) fn ran_per_history(&self, nonces: &[String]) -> Vec<String> {
        let refs: Vec<&str> = nonces.iter().map(String::as_str).collect();
        let by_nonce = self.committed_of(&refs);
        let mut ran = by_nonce.clone();
        // The server's messages only: a bubble of this client's (a held turn's, a prompt's
        // optimistic copy) of the same text is not one of them, and counting it took a
        // queued item of that text for run.
        let history = self.conversation.history().messages();
        let users: Vec<String> = (history.iter())
            .filter(|m| m.role == Role::User && !self.is_local(&m.id))
            .map(UIMessage::text)
            .collect();
        let items = self.queue.items();
        for nonce in nonces.iter().filter(|n| !by_nonce.contains(n)) {
            let Some(item) = items.iter().find(|i| &i.client_nonce == nonce) else {
                // Out of the queue, held as the next message: the server's messages of its
                // text (not the held bubble) say whether the server's copy ran.
                if let Phase::Held(h) = &self.turn.phase {
                    let held = h.nonce.as_deref() == Some(nonce.as_str());
                    if held && self.server_texts(&h.text) > h.texts_before {
                        ran.push(nonce.clone());
                    }
                }
                continue;
            };
            // Items of the same text ahead of it run before it.
            let ahead = (items.iter())
                .take_while(|i| i.client_nonce != item.client_nonce)
                .filter(|i| i.text == item.text && !i.read_only)
                .count();
            let count = users.iter().filter(|t| **t == item.text).count();
            if count > item.texts_before + ahead {
                ran.push(nonce.clone());
            }
        }
        ran
    }
}
