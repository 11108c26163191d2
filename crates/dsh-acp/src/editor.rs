//! [`AcpFiles`]: the file tools' text through the editor's buffers, with
//! `fs/read_text_file` and `fs/write_text_file`.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use agent_client_protocol_schema::v1::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use dsh_tool_fs::{EditorFiles, EditorFuture};
use std::path::Path;
use std::time::Duration;

/// How long the editor has to answer a read or a write.
pub const FILE_TIMEOUT: Duration = Duration::from_secs(30);

/// Reads and writes text files through the ACP client of `connection`,
/// for one session, so the model sees unsaved changes and its edits land
/// in the editor's buffers. Like [`crate::AcpApprover`], it must be used
/// from a task of the connection, not from inside one of its handlers.
#[derive(Clone)]
pub struct AcpFiles {
    connection: ConnectionTo<Client>,
    session: SessionId,
}

impl AcpFiles {
    /// The files of `session`, through the client of `connection`.
    pub fn new(connection: ConnectionTo<Client>, session: impl Into<String>) -> Self {
        AcpFiles {
            connection,
            session: SessionId::new(session.into()),
        }
    }
}

impl EditorFiles for AcpFiles {
    fn read_text(&self, path: &Path) -> EditorFuture<String> {
        let sent = self
            .connection
            .send_request(ReadTextFileRequest::new(self.session.clone(), path));
        Box::pin(async move {
            match tokio::time::timeout(FILE_TIMEOUT, sent.block_task()).await {
                Ok(Ok(response)) => Ok(response.content),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {} s", FILE_TIMEOUT.as_secs())),
            }
        })
    }

    fn write_text(&self, path: &Path, text: String) -> EditorFuture<()> {
        let sent = self.connection.send_request(WriteTextFileRequest::new(
            self.session.clone(),
            path,
            text,
        ));
        Box::pin(async move {
            match tokio::time::timeout(FILE_TIMEOUT, sent.block_task()).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {} s", FILE_TIMEOUT.as_secs())),
            }
        })
    }
}
