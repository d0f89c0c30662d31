//! Input cut short at every byte: an error naming the message and field,
//! never a panic.

use super::*;

/// `go_reference::OBJECT_META`.
fn go_object_meta() -> Vec<u8> {
    hex("0a05 7765622d30 1200 1a07 64656661756c74 2200 2a04 31323334 3202 3432 3803
        4208 0880e2cfaa06 1000 4a08 08e4e2cfaa06 1000 501e
        5a0a 0a03 617070 1203 776562 5a0d 0a04 74696572 1205 66726f6e74 6208 0a04 6e6f7465 1200
        7201 61 7201 62")
}

#[test]
fn object_meta_cut_at_every_byte_fails_naming_type_and_field_or_reads_the_fields_before() {
    let whole = go_object_meta();
    let mut field_starts = 0;
    for cut in 0..whole.len() {
        match ObjectMeta::decode(&whole[..cut], DecodeOptions::default()) {
            // Cut between two fields: the fields before the cut.
            Ok(_) => field_starts += 1,
            Err(error) => {
                let path = error.path();
                assert_eq!(path[0].0, "ObjectMeta", "cut at {cut}: {error}");
                assert!(
                    matches!(
                        error.innermost(),
                        ErrorKind::TruncatedVarint | ErrorKind::LengthPastEnd { .. } | ErrorKind::TruncatedFixed { .. }
                    ),
                    "cut at {cut}: {error}"
                );
            }
        }
    }
    // The empty prefix, and the end of each field but the last of 15.
    assert_eq!(field_starts, 15);
}

#[test]
fn envelopes_and_watch_frames_cut_at_every_byte_never_panic() {
    let envelope = encode_object(
        "v1",
        "ConfigMap",
        &ConfigMap {
            metadata: ObjectMeta { name: Some("cm".into()), ..ObjectMeta::default() },
            data: Some(Map::from([("k", "v")])),
        },
    );
    let frame = encode_watch_event("MODIFIED", &envelope);
    for cut in 0..envelope.len() {
        // Cut between two fields of the envelope, what is left may decode.
        let decoded =
            Envelope::decode(&envelope[..cut]).and_then(|e| e.decode_object::<ConfigMap>(DecodeOptions::default()));
        if let Err(error) = decoded {
            let named =
                !error.path().is_empty() || matches!(error.kind(), ErrorKind::Magic { .. } | ErrorKind::EmptyBody);
            assert!(named, "cut at {cut}: {error}");
        }
    }
    for cut in 0..frame.len() {
        let error = WatchEventFrame::decode(&frame[..cut]).unwrap_err();
        assert!(
            !error.path().is_empty() || matches!(error.kind(), ErrorKind::MissingField { .. }),
            "cut at {cut}: {error}"
        );
    }
    assert!(WatchEventFrame::decode(&frame).is_ok());
}
