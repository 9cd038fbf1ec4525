//! The stdio transport of `permaudit server`: one thread reads standard input, one writes
//! standard output, each through an *unbounded* channel.
//!
//! `lsp_server::Connection::stdio` hands messages over a `bounded(0)` channel: the reader
//! thread waits until the loop takes each message, so the loop can never see the changes
//! typed while it analysed (a `try_recv` finds at most one), and 30 keystrokes became 30
//! analyses. Here the reader queues whatever arrives, so the loop can drain a burst and
//! analyse its last text once.

use crossbeam_channel::unbounded;
use lsp_server::{Connection, Message};
use std::io::{self, BufReader, Write};
use std::thread::JoinHandle;

/// The reader and writer threads, joined after the loop ends.
pub struct Threads {
    reader: JoinHandle<io::Result<()>>,
    writer: JoinHandle<io::Result<()>>,
}

impl Threads {
    /// Wait for both threads (the reader ends at `exit` or end of input, the writer when
    /// the connection's sender is dropped).
    pub fn join(self) {
        let _ = self.reader.join();
        let _ = self.writer.join();
    }
}

pub fn stdio() -> io::Result<(Connection, Threads)> {
    let (to_loop, from_reader) = unbounded::<Message>();
    let (to_writer, from_loop) = unbounded::<Message>();
    let reader = std::thread::Builder::new()
        .name("permaudit-lsp-reader".into())
        .spawn(move || {
            let mut input = BufReader::new(io::stdin().lock());
            while let Some(msg) = Message::read(&mut input)? {
                let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
                if to_loop.send(msg).is_err() || exit {
                    break;
                }
            }
            Ok(())
        })?;
    let writer = std::thread::Builder::new()
        .name("permaudit-lsp-writer".into())
        .spawn(move || {
            let mut out = io::stdout().lock();
            for msg in from_loop {
                msg.write(&mut out)?;
                out.flush()?;
            }
            Ok(())
        })?;
    Ok((
        Connection {
            sender: to_writer,
            receiver: from_reader,
        },
        Threads { reader, writer },
    ))
}
