use quote::quote;

use super::*;

fn expand(input: TokenStream, apply: bool) -> String {
    let out = custom_resource(input, Options { apply }).expect("the derive expands");
    let file: syn::File = syn::parse2(out).expect("the expansion parses as items");
    prettyplease::unparse(&file)
}

fn greeting() -> TokenStream {
    quote! {
        /// A greeting.
        #[resource(group = "example.com", version = "v1", kind = "Greeting", namespaced, status = "GreetingStatus")]
        pub struct GreetingSpec {
            /// What to say.
            pub message: String,
            #[schema(minimum = 0, maximum = 10)]
            pub replicas: Option<i32>,
            pub settings: Option<Box<crate::nested::Settings>>,
            pub tags: Vec<String>,
        }
    }
}

#[test]
fn a_kind_gets_the_struct_codec_resource_markers_and_crd() {
    let text = expand(greeting(), false);
    for item in [
        "pub struct Greeting {",
        "pub spec: GreetingSpec,",
        "pub status: Option<GreetingStatus>,",
        "impl ::k8s_client_runtime::codec::fields::DecodeFields for GreetingSpec",
        "impl ::k8s_client_runtime::codec::fields::EncodeFields for GreetingSpec",
        "impl ::k8s_client_runtime::schema::Schema for GreetingSpec",
        "::k8s_client_runtime::impl_resource!(",
        "impl ::k8s_client_runtime::rest::verbs::Patch for Greeting {}",
        "impl ::k8s_client_runtime::rest::HasStatus for Greeting {}",
        "pub fn crd() -> ::k8s_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition",
        "<crate::nested::Settings as ::k8s_client_runtime::schema::Schema>::schema",
    ] {
        assert!(text.contains(item), "no {item:?} in\n{text}");
    }
    assert!(!text.contains("pub struct GreetingSpec"), "the user's struct is not declared again");
    assert!(!text.contains("GreetingApply"), "no apply configurations without the feature");
    // The user's fields are read and written through their own serde impls.
    assert!(text.contains("self.message = map.next_value()?"), "{text}");
}

#[test]
fn with_apply_a_kind_gets_its_apply_configurations() {
    let text = expand(greeting(), true);
    for item in [
        "pub struct GreetingApply {",
        "pub struct GreetingSpecApply {",
        "pub settings: Option<\n        ::std::boxed::Box<\n            <crate::nested::Settings as ::k8s_client_runtime::apply::ApplyValue>::Apply,",
        "<GreetingStatus as ::k8s_client_runtime::apply::ApplyValue>::Apply",
        "impl ::k8s_client_runtime::apply::ApplyValue for GreetingSpec",
        "pub fn extract_status(",
    ] {
        assert!(text.contains(item), "no {item:?} in\n{text}");
    }
}

#[test]
fn the_crd_template_holds_the_spec_schema_keywords() {
    let text = expand(greeting(), false);
    assert!(text.contains(r#"\"maximum\":10"#), "{text}");
    assert!(text.contains(r#"\"required\":[\"message\",\"tags\"]"#), "{text}");
    assert!(text.contains(r#"\"name\":\"greetings.example.com\""#), "{text}");
}

#[test]
fn a_string_enum_reads_its_values_and_refuses_others() {
    let out = schema(
        quote! {
            enum Color { #[schema(rename = "red")] Red, Green }
        },
        Options::default(),
    )
    .unwrap();
    let text = prettyplease::unparse(&syn::parse2(out).unwrap());
    assert!(text.contains(r#"Color::Red => "red""#), "{text}");
    assert!(text.contains(r#"Color::Green => "Green""#), "{text}");
    assert!(text.contains("unknown value {:?} of {}"), "{text}");
    assert!(text.contains(r#"\"enum\":[\"red\",\"Green\"]"#), "{text}");
}

fn error(input: TokenStream) -> String {
    match schema(input.clone(), Options::default()) {
        Err(e) => e.to_string(),
        Ok(_) => match custom_resource(input, Options::default()) {
            Err(e) => e.to_string(),
            Ok(out) => panic!("expanded:\n{out}"),
        },
    }
}

#[test]
fn what_has_no_structural_schema_is_an_error_naming_it() {
    let cases = [
        (
            quote!(
                struct A {
                    m: std::collections::HashMap<i64, String>,
                }
            ),
            "keys of type `i64`",
        ),
        (
            quote!(
                struct Node {
                    next: Option<Box<Node>>,
                }
            ),
            "`Node` holds itself",
        ),
        (
            quote!(
                struct A<T> {
                    t: T,
                }
            ),
            "cannot be generic",
        ),
        (
            quote!(
                struct A {
                    t: (i32, String),
                }
            ),
            "has no structural schema",
        ),
        (
            quote!(
                enum E {
                    A(String),
                }
            ),
            "variant `A` holds data",
        ),
        (
            quote!(
                struct A(i32);
            ),
            "named fields",
        ),
        (
            quote!(
                struct A {
                    a_b: i32,
                    #[schema(rename = "aB")]
                    c: i32,
                }
            ),
            "both `aB` in JSON",
        ),
        (
            quote!(
                struct A {
                    #[schema(maximun = 1)]
                    a: i32,
                }
            ),
            "unknown key `maximun`",
        ),
        (
            quote!(
                struct A {
                    #[schema(list_type = "set")]
                    a: String,
                }
            ),
            "list_type is for lists",
        ),
        (
            quote!(
                struct A {
                    a: Option<Option<i32>>,
                }
            ),
            "an `Option` inside an `Option`",
        ),
    ];
    for (input, expected) in cases {
        let e = error(input.clone());
        assert!(e.contains(expected), "{input}: {e}");
    }
}

#[test]
fn a_custom_resource_needs_its_group_version_and_kind() {
    let e = custom_resource(
        quote!(
            struct S {
                a: i32,
            }
        ),
        Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("needs #[resource("), "{e}");
    let e = custom_resource(
        quote!(
            #[resource(version = "v1", kind = "K")]
            struct S {
                a: i32,
            }
        ),
        Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("needs `group = "), "{e}");
    let e = custom_resource(
        quote!(
            #[resource(group = "g", version = "v1", kind = "S")]
            struct S {
                a: i32,
            }
        ),
        Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("the kind's own name"), "{e}");
}

#[test]
fn plurals_are_guessed_in_english() {
    for (kind, plural) in
        [("Greeting", "greetings"), ("Policy", "policies"), ("Ingress", "ingresses"), ("Gateway", "gateways")]
    {
        assert_eq!(crd::plural(kind), plural);
    }
}
