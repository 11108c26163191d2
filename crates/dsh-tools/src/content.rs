//! Content blocks: what a tool returns and what the model sees.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Fields of a block beyond the ones this crate reads (MCP's `annotations`
/// and `_meta`, a resource link's `title` or `size`), kept so that a block
/// from another server passes through whole.
pub type ContentExtra = Map<String, Value>;

/// One block of tool output, serialised in the spec's wire shape:
/// `{"type":"text","text":…}` or `{"type":"image","data":…,"mimeType":…}`;
/// MCP's `audio`, `resource_link` and `resource` blocks for tools that
/// come from other MCP servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Any other field of the block.
        #[serde(flatten)]
        extra: ContentExtra,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64 data.
        data: String,
        /// The MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Any other field of the block.
        #[serde(flatten)]
        extra: ContentExtra,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The base64 data.
        data: String,
        /// The MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Any other field of the block.
        #[serde(flatten)]
        extra: ContentExtra,
    },
    /// A link to a resource the client may read: `uri`, `name` and the
    /// resource's optional fields.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// The resource's name.
        name: String,
        /// Any other field of the link.
        #[serde(flatten)]
        extra: ContentExtra,
    },
    /// A resource embedded in the result: `{uri, mimeType, text | blob}`.
    Resource {
        /// The resource's contents.
        resource: Value,
        /// Any other field of the block.
        #[serde(flatten)]
        extra: ContentExtra,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            extra: ContentExtra::new(),
        }
    }

    /// An image block from base64 `data` and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            extra: ContentExtra::new(),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

impl From<String> for ContentBlock {
    fn from(text: String) -> Self {
        ContentBlock::text(text)
    }
}

impl From<&str> for ContentBlock {
    fn from(text: &str) -> Self {
        ContentBlock::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_block_reads_and_writes_its_wire_shape_whole() {
        for wire in [
            json!({"type": "text", "text": "hi"}),
            json!({"type": "text", "text": "hi", "annotations": {"priority": 0.5}}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "UklG", "mimeType": "audio/wav", "_meta": {"k": 1}}),
            json!({"type": "resource_link", "uri": "file:///x", "name": "x", "size": 3}),
            json!({"type": "resource", "resource": {"uri": "file:///x", "text": "body"}}),
        ] {
            let block: ContentBlock = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(serde_json::to_value(&block).unwrap(), wire);
        }
        assert_eq!(
            serde_json::to_value(ContentBlock::text("a")).unwrap(),
            json!({"type": "text", "text": "a"})
        );
    }
}
