//! A field's Rust type read as an IR [`FieldType`]: scalars, strings,
//! `Option`, `Box`, lists and string-keyed maps by their shape; any other
//! named type as a [`Shape::Declared`] reference, which answers for its
//! own schema. What no structural schema can hold is an error naming it.

use quote::ToTokens;
use serde_json::Value;
use syn::spanned::Spanned;
use syn::{Error, GenericArgument, PathArguments, Result, Type};

use super::declared_def;
use crate::ir::{Api, FieldType, Keywords, Shape};

/// How a field holds its value.
pub struct Held {
    /// What the value is.
    pub ty: FieldType,
    /// In an `Option`: not required.
    pub optional: bool,
    /// In a `Box`.
    pub boxed: bool,
    /// What the Rust type says beyond the JSON type (an unsigned integer's
    /// `minimum: 0`).
    pub keywords: Keywords,
}

/// The last segment of a plain path type (`std::option::Option<T>` →
/// `Option`, with its arguments).
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// The type arguments of a segment (`<K, V>`).
fn type_args(segment: &syn::PathSegment) -> Vec<&Type> {
    match &segment.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn one_arg<'a>(segment: &'a syn::PathSegment, ty: &Type) -> Result<&'a Type> {
    match type_args(segment).as_slice() {
        [t] => Ok(t),
        _ => Err(Error::new(ty.span(), format!("`{}` takes one type argument here", segment.ident))),
    }
}

/// The field type `ty` of a field of the type `own`, the types it names
/// added to `api`.
pub fn field_type(ty: &Type, own: &str, api: &mut Api) -> Result<Held> {
    let mut held = Held { ty: FieldType::Json, optional: false, boxed: false, keywords: Keywords::new() };
    let mut ty = ty;
    if let Some(seg) = last_segment(ty).filter(|s| s.ident == "Option") {
        held.optional = true;
        ty = one_arg(seg, ty)?;
    }
    if let Some(seg) = last_segment(ty).filter(|s| s.ident == "Box") {
        held.boxed = true;
        ty = one_arg(seg, ty)?;
    }
    if last_segment(ty).is_some_and(|s| s.ident == "Option") {
        return Err(Error::new(
            ty.span(),
            "an `Option` inside an `Option` or `Box`: JSON has one absent value; use one `Option` (and \
             #[schema(nullable)] to allow `null`)",
        ));
    }
    held.ty = value_type(ty, own, api, &mut held.keywords)?;
    Ok(held)
}

/// The type of a value (no `Option` around it).
fn value_type(ty: &Type, own: &str, api: &mut Api, keywords: &mut Keywords) -> Result<FieldType> {
    let Some(seg) = last_segment(ty) else {
        return Err(Error::new(
            ty.span(),
            format!(
                "`{}` has no structural schema: a field holds a named type (a scalar, String, Vec, a map with \
                 string keys, or a type deriving Schema)",
                ty.to_token_stream()
            ),
        ));
    };
    let name = seg.ident.to_string();
    let unsigned = |keywords: &mut Keywords| {
        keywords.insert("minimum".into(), Value::from(0));
    };
    let scalar = match name.as_str() {
        "String" | "LeanString" => Some(FieldType::String),
        "bool" => Some(FieldType::Bool),
        "i8" | "i16" | "i32" => Some(FieldType::I32),
        "u8" | "u16" => {
            unsigned(keywords);
            Some(FieldType::I32)
        }
        "i64" | "isize" => Some(FieldType::I64),
        "u32" | "u64" | "usize" => {
            unsigned(keywords);
            Some(FieldType::I64)
        }
        "f32" | "f64" => Some(FieldType::F64),
        "Value" if path_text(ty).ends_with("serde_json::Value") || path_text(ty) == "Value" => Some(FieldType::Json),
        _ => None,
    };
    if let Some(scalar) = scalar {
        if !matches!(seg.arguments, PathArguments::None) {
            return Err(Error::new(ty.span(), format!("`{name}` takes no type arguments")));
        }
        return Ok(scalar);
    }
    match name.as_str() {
        // A box changes nothing on the wire, inside a list or map too.
        "Box" => value_type(one_arg(seg, ty)?, own, api, keywords),
        "Vec" | "ThinVec" | "VecDeque" | "BTreeSet" | "HashSet" => {
            let inner = one_arg(seg, ty)?;
            if last_segment(inner).is_some_and(|s| s.ident == "Option") {
                return Err(Error::new(inner.span(), "a list of `Option`s: a structural list holds values, not nulls"));
            }
            let mut ignored = Keywords::new();
            Ok(FieldType::Array(Box::new(value_type(inner, own, api, &mut ignored)?)))
        }
        "BTreeMap" | "HashMap" | "IndexMap" => {
            let args = type_args(seg);
            let [key, value] = args.as_slice() else {
                return Err(Error::new(ty.span(), format!("`{name}` takes a key and a value type")));
            };
            let key_is_text = last_segment(key).is_some_and(|s| s.ident == "String" || s.ident == "LeanString");
            if !key_is_text {
                return Err(Error::new(
                    key.span(),
                    format!(
                        "a map with keys of type `{}`: JSON objects have string keys, so a structural map has \
                         `String` keys",
                        key.to_token_stream()
                    ),
                ));
            }
            let mut ignored = Keywords::new();
            Ok(FieldType::Map(Box::new(value_type(value, own, api, &mut ignored)?)))
        }
        "Map" if matches!(seg.arguments, PathArguments::None) => Ok(FieldType::Map(Box::new(FieldType::String))),
        _ if name == own => Err(Error::new(
            ty.span(),
            format!(
                "`{own}` holds itself: a structural schema is a tree written out in full, so a type cannot \
                 hold itself, even in a `Box` or a list"
            ),
        )),
        _ if !matches!(seg.arguments, PathArguments::None) => Err(Error::new(
            ty.span(),
            format!("`{}` is generic: derive Schema on a type of its own that holds what it holds", path_text(ty)),
        )),
        _ => {
            let path = path_text(ty);
            if !api.types.contains_key(&path) {
                let mut def = declared_def(&path, &name, None, Shape::Declared);
                def.external = true;
                api.types.insert(path.clone(), def);
            }
            Ok(FieldType::Ref(path))
        }
    }
}

/// A path type as written, without spaces (`crate::v1::Settings`).
fn path_text(ty: &Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}
