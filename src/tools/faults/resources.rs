//! The correct endpoint's resources, as the official conformance suite reads them
//! (`resources-*`, `sep-2164-resource-not-found`): a static text and a static binary resource, a
//! watched resource to subscribe to, and one template, `test://template/{id}/data`. Answers are
//! bare results or JSON-RPC error objects; the dispatcher (`methods.rs`) frames them.

use serde_json::{Value, json};

use super::fixtures::PNG;

/// The template every `test://template/<id>/data` URI is read through.
const TEMPLATE: &str = "test://template/{id}/data";

/// `(uri, name, description, mimeType)` of the listed resources.
const LISTED: &[(&str, &str, &str, &str)] = &[
    (
        "test://static-text",
        "static-text",
        "A static text resource",
        "text/plain",
    ),
    (
        "test://static-binary",
        "static-binary",
        "A static binary resource (a PNG)",
        "image/png",
    ),
    (
        "test://watched-resource",
        "watched-resource",
        "A resource to subscribe to",
        "text/plain",
    ),
];

/// The answer to a `resources/*` method, `None` when `method` is not one.
pub(crate) fn answer(method: &str, params: &Value) -> Option<Result<Value, Value>> {
    Some(match method {
        "resources/list" => Ok(
            json!({"resources": LISTED.iter().map(|(uri, name, d, mime)| {
            json!({"uri": uri, "name": name, "description": d, "mimeType": mime})
        }).collect::<Vec<_>>()}),
        ),
        "resources/templates/list" => Ok(json!({"resourceTemplates": [{
            "uriTemplate": TEMPLATE, "name": "template",
            "description": "A template whose {id} is substituted into the content",
            "mimeType": "application/json"}]})),
        "resources/read" => read(params),
        // One subscription list would be per session; the server keeps none and sends no
        // updates, which the revision allows (a subscription is a request, not a promise).
        "resources/subscribe" | "resources/unsubscribe" => match uri(params) {
            Some(_) => Ok(json!({})),
            None => Err(invalid("params.uri is required", None)),
        },
        _ => return None,
    })
}

fn uri(params: &Value) -> Option<&str> {
    params.get("uri").and_then(Value::as_str)
}

fn invalid(message: &str, uri: Option<&str>) -> Value {
    let mut e = json!({"code": -32602, "message": message});
    if let Some(uri) = uri {
        e["data"] = json!({"uri": uri});
    }
    e
}

/// `resources/read`: the contents, or `-32602` with the URI in `data` (SEP-2164: not
/// `-32002`, and never an empty `contents`).
fn read(params: &Value) -> Result<Value, Value> {
    let Some(uri) = uri(params) else {
        return Err(invalid("params.uri is required", None));
    };
    let content = match uri {
        "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
                                       "text": "This is the content of the static text resource."}),
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
        "test://watched-resource" => json!({"uri": uri, "mimeType": "text/plain",
                                            "text": "Watched resource content"}),
        _ => match template_id(uri) {
            Some(id) => {
                let text =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                json!({"uri": uri, "mimeType": "application/json", "text": text.to_string()})
            }
            None => return Err(invalid(&format!("Resource not found: {uri}"), Some(uri))),
        },
    };
    Ok(json!({"contents": [content]}))
}

/// The `{id}` of a URI the template matches: one non-empty path segment.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_uri(uri: &str) -> Result<Value, Value> {
        answer("resources/read", &json!({"uri": uri})).expect("a resources method")
    }

    #[test]
    fn listed_resources_read_back_with_their_own_uri_and_type() {
        let list = answer("resources/list", &json!({})).unwrap().unwrap();
        for r in list["resources"].as_array().unwrap() {
            let uri = r["uri"].as_str().unwrap();
            let read = read_uri(uri).unwrap();
            assert_eq!(read["contents"][0]["uri"], uri);
            assert_eq!(read["contents"][0]["mimeType"], r["mimeType"]);
        }
        assert!(read_uri("test://static-binary").unwrap()["contents"][0]["blob"].is_string());
    }

    #[test]
    fn the_template_substitutes_its_id_and_unknown_uris_are_invalid_params() {
        let read = read_uri("test://template/123/data").unwrap();
        let text = read["contents"][0]["text"].as_str().unwrap();
        assert!(text.contains("\"id\":\"123\""), "{text}");
        for bad in [
            "test://nope",
            "test://template//data",
            "test://template/a/b/data",
        ] {
            let err = read_uri(bad).unwrap_err();
            assert_eq!(err["code"], -32602);
            assert_eq!(err["data"]["uri"], bad);
        }
        assert!(answer("resources/read", &json!({})).unwrap().is_err());
        assert!(answer("tools/list", &json!({})).is_none());
    }

    #[test]
    fn subscribe_needs_a_uri() {
        let ok = answer(
            "resources/subscribe",
            &json!({"uri": "test://watched-resource"}),
        );
        assert_eq!(ok, Some(Ok(json!({}))));
        assert!(
            answer("resources/unsubscribe", &json!({}))
                .unwrap()
                .is_err()
        );
    }
}
