use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::MapAccess;
use thin_vec::thin_vec;

use super::*;

/// A struct shaped like the generated ones, written out by hand.
#[derive(Debug, Default, PartialEq)]
struct Port {
    number: i32,
    name: Option<String>,
}

impl DecodeFields for Port {
    const NAME: &'static str = "Port";
    fn field_index(key: &str) -> Option<u16> {
        Some(match key {
            "number" => 0,
            "name" => 1,
            _ => return None,
        })
    }
    fn decode_field<'de, A: MapAccess<'de>>(
        &mut self,
        index: u16,
        map: &mut A,
        _options: DecodeOptions,
    ) -> Result<(), A::Error> {
        match index {
            0 => self.number = map.next_value()?,
            1 => self.name = map.next_value()?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Port {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize(d)
    }
}

#[derive(Debug, Default, PartialEq)]
struct Thing {
    port: Port,
    spare: Option<Port>,
    boxed: Option<Box<Port>>,
    ports: ThinVec<Port>,
    more_ports: Option<ThinVec<Port>>,
    tags: ThinVec<String>,
    aliases: Option<ThinVec<String>>,
    labels: BTreeMap<String, String>,
    /// Maps of text, read as the generated decoders read labels and
    /// annotations.
    shared_labels: Map,
    annotations: Option<Map>,
    limits: Option<Map<Qty>>,
}

/// A quantity as the generated crate has it: text, or a bare number kept
/// as its decimal text.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Qty(LeanString);

impl AsRef<str> for Qty {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl crate::map::TextValue for Qty {
    const NUMBERS_AS_TEXT: bool = true;
    const EXPECTING: &'static str = "a quantity";
    fn from_text(text: &str) -> Self {
        Qty(text.into())
    }
}

impl<'de> Deserialize<'de> for Qty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::codec::deserialize_quantity(d).map(Qty)
    }
}

impl DecodeFields for Thing {
    const NAME: &'static str = "Thing";
    fn field_index(key: &str) -> Option<u16> {
        Some(match key {
            "port" => 0,
            "spare" => 1,
            "boxed" => 2,
            "ports" => 3,
            "morePorts" => 4,
            "tags" => 5,
            "aliases" => 6,
            "labels" => 7,
            "sharedLabels" => 8,
            "annotations" => 9,
            "limits" => 10,
            _ => return None,
        })
    }
    fn decode_field<'de, A: MapAccess<'de>>(
        &mut self,
        index: u16,
        map: &mut A,
        options: DecodeOptions,
    ) -> Result<(), A::Error> {
        match index {
            0 => map.next_value_seed(Struct(&mut self.port, options))?,
            1 => map.next_value_seed(OptionStruct(&mut self.spare, options))?,
            2 => map.next_value_seed(OptionBox(&mut self.boxed, options))?,
            3 => map.next_value_seed(StructList(&mut self.ports, options))?,
            4 => map.next_value_seed(OptionStructList(&mut self.more_ports, options))?,
            5 => map.next_value_seed(List(&mut self.tags))?,
            6 => map.next_value_seed(OptionList(&mut self.aliases))?,
            7 => self.labels = or_default(map)?,
            8 => map.next_value_seed(SharedMap(&mut self.shared_labels))?,
            9 => map.next_value_seed(OptionSharedMap(&mut self.annotations))?,
            10 => map.next_value_seed(OptionSharedMap(&mut self.limits))?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Thing {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize(d)
    }
}

/// A kind that keeps what it does not declare.
#[derive(Debug, Default, PartialEq)]
struct Open {
    size: Option<i64>,
    extra: BTreeMap<String, serde_json::Value>,
}

impl DecodeFields for Open {
    const NAME: &'static str = "Open";
    const KEEPS_UNKNOWN: bool = true;
    fn field_index(key: &str) -> Option<u16> {
        match key {
            "size" => Some(0),
            "apiVersion" | "kind" => Some(u16::MAX),
            _ => None,
        }
    }
    fn decode_field<'de, A: MapAccess<'de>>(
        &mut self,
        index: u16,
        map: &mut A,
        _options: DecodeOptions,
    ) -> Result<(), A::Error> {
        match index {
            0 => self.size = map.next_value()?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
    fn decode_unknown<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        self.extra.insert(key, map.next_value()?);
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Open {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize(d)
    }
}

fn port(number: i32, name: Option<&str>) -> Port {
    Port { number, name: name.map(str::to_owned) }
}

const FULL: &str = r#"{
    "port": {"number": 1, "name": "a"},
    "spare": {"number": 2},
    "boxed": {"name": "b"},
    "ports": [{"number": 3}, {"number": 4, "name": "d", "unknown": [1, {"x": null}]}],
    "morePorts": [],
    "tags": ["x", "y", "z"],
    "aliases": ["q"],
    "labels": {"app": "web"},
    "notDeclared": {"deep": [true]}
}"#;

fn full() -> Thing {
    Thing {
        port: port(1, Some("a")),
        spare: Some(port(2, None)),
        boxed: Some(Box::new(port(0, Some("b")))),
        ports: thin_vec![port(3, None), port(4, Some("d"))],
        more_ports: Some(thin_vec![]),
        tags: thin_vec!["x".into(), "y".into(), "z".into()],
        aliases: Some(thin_vec!["q".into()]),
        labels: BTreeMap::from([("app".into(), "web".into())]),
        ..Thing::default()
    }
}

#[test]
fn reads_every_kind_of_field_and_skips_unknown_keys() {
    assert_eq!(serde_json::from_str::<Thing>(FULL).unwrap(), full());
}

#[test]
fn reads_through_every_key_form() {
    // Owned keys (a `Value`), borrowed ones (`&Value`), transient ones (a reader).
    let value: serde_json::Value = serde_json::from_str(FULL).unwrap();
    assert_eq!(Thing::deserialize(&value).unwrap(), full());
    assert_eq!(serde_json::from_value::<Thing>(value).unwrap(), full());
    assert_eq!(serde_json::from_reader::<_, Thing>(FULL.as_bytes()).unwrap(), full());
    // An escaped key cannot be borrowed.
    assert_eq!(serde_json::from_str::<Port>(r#"{"n\u0061me": "e"}"#).unwrap(), port(0, Some("e")));
}

#[test]
fn absent_fields_keep_their_default() {
    assert_eq!(serde_json::from_str::<Thing>("{}").unwrap(), Thing::default());
}

#[test]
fn null_clears_optionals_and_empties_plain_lists_and_maps() {
    let json = r#"{"spare": null, "boxed": null, "ports": null, "morePorts": null,
        "tags": null, "aliases": null, "labels": null}"#;
    assert_eq!(serde_json::from_str::<Thing>(json).unwrap(), Thing::default());
    // A plain struct or scalar field does not take null, as with the derive.
    let err = serde_json::from_str::<Thing>(r#"{"port": null}"#).unwrap_err().to_string();
    assert!(err.contains("struct Port"), "{err}");
    assert!(serde_json::from_str::<Port>(r#"{"number": null}"#).is_err());
}

#[test]
fn lists_are_exactly_sized() {
    let thing = serde_json::from_str::<Thing>(FULL).unwrap();
    assert_eq!(thing.ports.capacity(), 2);
    assert_eq!(thing.tags.capacity(), 3);
    assert_eq!(thing.aliases.as_ref().map(ThinVec::capacity), Some(1));
}

#[test]
fn lists_longer_than_the_staged_room_are_read_whole_and_exactly_sized() {
    // Up to, at and past the elements staged on the stack, of structs read
    // in place and of values; then one heap block full (12), and past it,
    // across several blocks that are joined at the end.
    for n in [5, 6, 7, 12, 13, 37, 100] {
        let ports: Vec<String> = (1..=n).map(|i| format!(r#"{{"number": {i}}}"#)).collect();
        let tags: Vec<String> = (1..=n).map(|i| format!(r#""t{i}""#)).collect();
        let json = format!(r#"{{"ports": [{}], "tags": [{}]}}"#, ports.join(","), tags.join(","));
        let thing = serde_json::from_str::<Thing>(&json).unwrap();
        assert_eq!(thing.ports.iter().map(|p| p.number).collect::<Vec<_>>(), (1..=n).collect::<Vec<_>>());
        assert_eq!(thing.ports.capacity(), n as usize);
        assert_eq!(
            thing.tags.iter().map(String::as_str).collect::<Vec<_>>(),
            (1..=n).map(|i| format!("t{i}")).collect::<Vec<_>>()
        );
        assert_eq!(thing.tags.capacity(), n as usize);
    }
}

#[test]
fn a_repeated_key_is_read_again_the_later_value_winning() {
    let json = r#"{"port": {"number": 1, "name": "a"}, "port": {"number": 2},
        "tags": ["x", "y"], "tags": ["z"], "spare": {"number": 3}, "spare": null}"#;
    let thing = serde_json::from_str::<Thing>(json).unwrap();
    // Objects merge, as in Go's encoding/json; lists are replaced.
    assert_eq!(thing.port, port(2, Some("a")));
    assert_eq!(thing.tags, vec!["z".to_owned()]);
    assert_eq!(thing.tags.capacity(), 1);
    assert_eq!(thing.spare, None);
}

#[test]
fn errors_name_the_struct_or_the_field_value() {
    let err = serde_json::from_str::<Thing>(r#"{"ports": [{"number": "x"}]}"#).unwrap_err().to_string();
    assert!(err.contains("invalid type: string \"x\", expected i32"), "{err}");
    let err = serde_json::from_str::<Thing>(r#"{"spare": 7}"#).unwrap_err().to_string();
    assert!(err.contains("integer `7`, expected struct Port"), "{err}");
    let err = serde_json::from_str::<Thing>("[]").unwrap_err().to_string();
    assert!(err.contains("struct Thing"), "{err}");
    let err = serde_json::from_str::<Thing>(r#"{"tags": {}}"#).unwrap_err().to_string();
    assert!(err.contains("a list"), "{err}");
}

#[test]
fn a_kind_keeping_unknown_fields_gets_them_but_not_its_type_meta() {
    let json =
        r#"{"apiVersion": "example.com/v1", "kind": "Open", "size": 2, "owner": "team-a", "limits": {"cpu": 2}}"#;
    let open = serde_json::from_str::<Open>(json).unwrap();
    assert_eq!(open.size, Some(2));
    assert_eq!(
        open.extra,
        BTreeMap::from([
            ("owner".to_owned(), serde_json::json!("team-a")),
            ("limits".to_owned(), serde_json::json!({"cpu": 2})),
        ])
    );
    // Also through owned and transient keys.
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(serde_json::from_value::<Open>(value).unwrap(), open);
    assert_eq!(serde_json::from_reader::<_, Open>(json.as_bytes()).unwrap(), open);
}

#[test]
fn reads_yaml_too() {
    let yaml = "port: {number: 5}\ntags: [a]\nspare: ~\n";
    let thing: Thing = serde_yaml_ng::from_str(yaml).unwrap();
    assert_eq!(thing.port, port(5, None));
    assert_eq!(thing.tags, vec!["a".to_owned()]);
}

/// String fields as generated: through [`Text`] and [`OptionText`].
#[derive(Debug, Default, PartialEq)]
struct Mount {
    path: LeanString,
    sub_path: Option<LeanString>,
}

impl DecodeFields for Mount {
    const NAME: &'static str = "Mount";
    fn field_index(key: &str) -> Option<u16> {
        Some(match key {
            "path" => 0,
            "subPath" => 1,
            _ => return None,
        })
    }
    fn decode_field<'de, A: MapAccess<'de>>(
        &mut self,
        index: u16,
        map: &mut A,
        _options: DecodeOptions,
    ) -> Result<(), A::Error> {
        match index {
            0 => map.next_value_seed(Text(&mut self.path))?,
            1 => map.next_value_seed(OptionText(&mut self.sub_path))?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Mount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize(d)
    }
}

#[test]
fn strings_repeated_across_objects_share_a_buffer() {
    let json = r#"[{"path": "/var/run/secrets/kubernetes.io/serviceaccount", "subPath": "ca.crt"},
        {"path": "/var/run/secrets/kubernetes.io/serviceaccount", "subPath": null}]"#;
    let mounts: Vec<Mount> = serde_json::from_str(json).unwrap();
    assert_eq!(mounts[0].path, "/var/run/secrets/kubernetes.io/serviceaccount");
    assert_eq!(mounts[0].sub_path.as_deref(), Some("ca.crt"));
    assert_eq!(mounts[1].sub_path, None, "null clears an optional string");
    assert_eq!(mounts[0].path.as_ptr(), mounts[1].path.as_ptr(), "one buffer for both");
    // Escaped text is unescaped first, then shared the same way.
    let escaped: Mount =
        serde_json::from_str(r#"{"path": "\/var\/run\/secrets\/kubernetes.io\/serviceaccount"}"#).unwrap();
    assert_eq!(escaped.path.as_ptr(), mounts[0].path.as_ptr());
}

#[test]
fn a_plain_string_does_not_take_null_or_a_number() {
    let err = serde_json::from_str::<Mount>(r#"{"path": null}"#).unwrap_err().to_string();
    assert!(err.contains("invalid type: null, expected a string"), "{err}");
    let err = serde_json::from_str::<Mount>(r#"{"subPath": 5}"#).unwrap_err().to_string();
    assert!(err.contains("invalid type: integer `5`, expected a string"), "{err}");
}

/// A metadata-like struct whose list is read through [`ManagedFields`].
#[derive(Debug, Default, PartialEq)]
struct Meta {
    name: Option<LeanString>,
    managed: Option<ThinVec<Port>>,
}

impl DecodeFields for Meta {
    const NAME: &'static str = "Meta";
    fn field_index(key: &str) -> Option<u16> {
        Some(match key {
            "name" => 0,
            "managedFields" => 1,
            _ => return None,
        })
    }
    fn decode_field<'de, A: MapAccess<'de>>(
        &mut self,
        index: u16,
        map: &mut A,
        options: DecodeOptions,
    ) -> Result<(), A::Error> {
        match index {
            0 => map.next_value_seed(OptionText(&mut self.name))?,
            1 => map.next_value_seed(ManagedFields(&mut self.managed, options))?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Meta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize(d)
    }
}

/// [`Meta`] behind every seed that carries the decode's options.
#[derive(Debug, Default, PartialEq)]
struct Holder {
    one: Meta,
    spare: Option<Meta>,
    boxed: Option<Box<Meta>>,
    list: ThinVec<Meta>,
    more: Option<ThinVec<Meta>>,
}

impl DecodeFields for Holder {
    const NAME: &'static str = "Holder";
    fn field_index(key: &str) -> Option<u16> {
        Some(match key {
            "one" => 0,
            "spare" => 1,
            "boxed" => 2,
            "list" => 3,
            "more" => 4,
            _ => return None,
        })
    }
    fn decode_field<'de, A: MapAccess<'de>>(
        &mut self,
        index: u16,
        map: &mut A,
        options: DecodeOptions,
    ) -> Result<(), A::Error> {
        match index {
            0 => map.next_value_seed(Struct(&mut self.one, options))?,
            1 => map.next_value_seed(OptionStruct(&mut self.spare, options))?,
            2 => map.next_value_seed(OptionBox(&mut self.boxed, options))?,
            3 => map.next_value_seed(StructList(&mut self.list, options))?,
            4 => map.next_value_seed(OptionStructList(&mut self.more, options))?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Holder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize(d)
    }
}

impl Holder {
    /// Every `Meta` it holds, to change.
    fn metas(&mut self) -> impl Iterator<Item = &mut Meta> {
        let Holder { one, spare, boxed, list, more } = self;
        std::iter::once(one)
            .chain(spare.as_mut())
            .chain(boxed.as_deref_mut())
            .chain(list.iter_mut())
            .chain(more.iter_mut().flatten())
    }
}

fn decode_holder(json: &str, options: DecodeOptions) -> Result<Holder, serde_json::Error> {
    crate::codec::decode_json_with(json.as_bytes(), options)
}

#[test]
fn managed_fields_are_skipped_at_every_depth_only_when_the_options_say_so() {
    let meta = r#"{"name": "a", "managedFields": [{"number": 1, "name": "kubectl"}]}"#;
    let json = format!(
        r#"{{"one": {meta}, "spare": {meta}, "boxed": {meta}, "list": [{meta}, {{"managedFields": null}}], "more": [{meta}]}}"#
    );
    let kept_meta = Meta { name: Some("a".into()), managed: Some(thin_vec![port(1, Some("kubectl"))]) };
    let plain: Holder = serde_json::from_str(&json).unwrap();
    let mut kept = decode_holder(&json, DecodeOptions::KEEP_ALL).unwrap();
    assert_eq!(kept, plain, "Deserialize decodes with the default options");
    assert_eq!(kept.metas().count(), 6);
    assert!(kept.metas().filter(|m| m.name.is_some()).all(|m| *m == kept_meta));

    let mut skipped = decode_holder(&json, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
    assert_eq!(skipped.metas().count(), 6);
    assert!(skipped.metas().all(|m| m.managed.is_none()), "{skipped:?}");
    kept.metas().for_each(|m| m.managed = None);
    assert_eq!(skipped, kept, "everything else reads the same");

    // A skipped list is still checked to be JSON, and the error placed.
    let bad = r#"{"one": {"managedFields": [1, }}"#;
    let err = decode_holder(bad, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap_err();
    assert_eq!(err.line(), 1, "{err}");
    // Options belong to one decode: the next one reads them again.
    assert_eq!(serde_json::from_str::<Holder>(&json).unwrap(), plain);
}

/// A `managedFields` list of [`Port`]s, as `(number, name)`.
type ManagedPorts = Vec<(i32, Option<String>)>;

/// A [`Meta`] as the property test writes it: its name and managed fields.
type MetaParts = (Option<String>, Option<ManagedPorts>);

/// A `managedFields` list of [`Port`]s.
fn managed_fields() -> impl proptest::strategy::Strategy<Value = ManagedPorts> {
    proptest::collection::vec((0..9i32, proptest::option::of("[a-z]{0,3}")), 0..3)
}

proptest::proptest! {
    /// Skipping managedFields gives what keeping them and then clearing
    /// them gives, wherever the metadata sits and whatever it holds.
    #[test]
    fn skipping_managed_fields_is_keeping_then_clearing_them(
        metas in proptest::collection::vec((proptest::option::of("[a-z]{0,5}"), proptest::option::of(managed_fields())), 5),
        list_len in 0..3usize,
    ) {
        let meta = |(name, managed): &MetaParts| {
            let managed = managed.as_ref().map(|m| {
                m.iter().map(|(number, name)| serde_json::json!({"number": number, "name": name})).collect::<Vec<_>>()
            });
            serde_json::json!({"name": name, "managedFields": managed})
        };
        let json = serde_json::json!({
            "one": meta(&metas[0]),
            "spare": meta(&metas[1]),
            "boxed": meta(&metas[2]),
            "list": std::iter::repeat_n(meta(&metas[3]), list_len).collect::<Vec<_>>(),
            "more": [meta(&metas[4])],
        })
        .to_string();
        let mut kept = decode_holder(&json, DecodeOptions::KEEP_ALL).unwrap();
        let skipped = decode_holder(&json, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
        kept.metas().for_each(|m| m.managed = None);
        proptest::prop_assert_eq!(skipped, kept);
    }
}

#[test]
fn shared_maps_read_values_and_null_as_go_clients_do() {
    let json = r#"{"sharedLabels": {"tier": "web", "app": "shop", "tier": "api"}, "annotations": {"note": "x"}}"#;
    // Twice: the second read of each map is found in the thread's table.
    for _ in 0..2 {
        let read = serde_json::from_str::<Thing>(json).unwrap();
        assert_eq!(read.shared_labels, Map::from([("app", "shop"), ("tier", "api")]), "sorted, the later key winning");
        assert_eq!(read.annotations, Some(Map::from([("note", "x")])));
    }
    let nulls = serde_json::from_str::<Thing>(r#"{"sharedLabels": null, "annotations": null}"#).unwrap();
    assert_eq!(nulls, Thing::default(), "null: an empty map, an absent one");
    let err = serde_json::from_str::<Thing>(r#"{"annotations": ["x"]}"#).unwrap_err().to_string();
    assert!(err.contains("a map"), "{err}");
}

#[test]
fn shared_maps_are_found_by_their_text_whatever_the_input_lends() {
    let value = "registry.example.com/team/web:1.2.3";
    let json = format!(r#"{{"annotations": {{"image": "{value}", "quote\"d": "line\nbreak"}}}}"#);
    let image_of = |thing: &Thing| thing.annotations.as_ref().unwrap()["image"].clone();
    let first = serde_json::from_str::<Thing>(&json).unwrap();
    let second = serde_json::from_str::<Thing>(&json).unwrap();
    // Bytes lend strings too; a `Value` and a reader lend nothing.
    let from_bytes = serde_json::from_slice::<Thing>(json.as_bytes()).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    let from_value = serde_json::from_value::<Thing>(parsed).unwrap();
    let from_reader = serde_json::from_reader::<_, Thing>(json.as_bytes()).unwrap();
    let expected = Map::from([("image", value), ("quote\"d", "line\nbreak")]);
    for read in [&first, &second, &from_bytes, &from_value, &from_reader] {
        assert_eq!(read.annotations.as_ref(), Some(&expected), "escapes read as text");
        assert_eq!(image_of(read).as_ptr(), image_of(&first).as_ptr(), "an equal map is the one found");
    }
}

#[test]
fn maps_of_quantities_read_numbers_and_maps_of_strings_refuse_them() {
    // Numbers keep the text they were written with, as Go's Quantity does.
    let json = r#"{"limits": {"memory": "128Mi", "cpu": 2, "gpu": 0.5, "exp": 1e3, "big": 123456789012345678901234}}"#;
    for read in
        [serde_json::from_str::<Thing>(json).unwrap(), serde_json::from_slice::<Thing>(json.as_bytes()).unwrap()]
    {
        let limits: Vec<(&str, &str)> = read.limits.iter().flatten().map(|(k, v)| (k.as_str(), v.as_ref())).collect();
        let want =
            [("big", "123456789012345678901234"), ("cpu", "2"), ("exp", "1e3"), ("gpu", "0.5"), ("memory", "128Mi")];
        assert_eq!(limits, want);
    }

    let err = serde_json::from_str::<Thing>(r#"{"limits": {"cpu": true}}"#).unwrap_err().to_string();
    assert!(err.contains("invalid type: boolean `true`, expected a quantity (a string or a number)"), "{err}");
    assert!(err.contains("line 1 column"), "the error says where: {err}");
    for (json, unexpected) in
        [(r#"{"annotations": {"n": 1}}"#, "integer `1`"), (r#"{"sharedLabels": {"n": null}}"#, "null")]
    {
        let err = serde_json::from_str::<Thing>(json).unwrap_err().to_string();
        assert!(err.contains(&format!("invalid type: {unexpected}, expected a string")), "{err}");
        assert!(err.contains("line 1 column"), "the error says where: {err}");
    }
}
