//! Bindings of the vault graph rules ([`crate::notes::edges`]) for
//! `fastnotebook.notes`: a note's `NoteChunk`s from its plan and the `Edge`s
//! it owns. Link targets are Python strings, resolved by a Python function:
//! the core sees them as handles ([`Handles`]).

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::notes_plan::NotePlan;
use super::notes_records::{Edge, NoteChunk, NoteLink};
use super::strings::str_slice;
use super::text::PyText;
use super::values::value_to_py;
use crate::notes::edges;
use crate::records;

/// Link targets as `resolve(target)` maps them (the raw target when it
/// gives `None` or there is no `resolve`), each target resolved once.
struct Targets<'py> {
    resolve: Option<Bound<'py, PyAny>>,
    seen: Bound<'py, PyDict>,
}

impl<'py> Targets<'py> {
    fn new(py: Python<'py>, resolve: Option<Bound<'py, PyAny>>) -> Self {
        Targets {
            resolve: resolve.filter(|r| !r.is_none()),
            seen: PyDict::new(py),
        }
    }

    fn of(&self, target: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(hit) = self.seen.get_item(target)? {
            return Ok(hit);
        }
        let found = match &self.resolve {
            Some(resolve) => {
                let r = resolve.call1((target,))?;
                if r.is_truthy()? { r } else { target.clone() }
            }
            None => target.clone(),
        };
        self.seen.set_item(target, &found)?;
        Ok(found)
    }
}

/// Python objects as handles for the core: equal objects (Python's `==`
/// and hash) get the same handle; the first object seen stands for them.
struct Handles<'py> {
    index: Bound<'py, PyDict>,
    objects: Vec<Bound<'py, PyAny>>,
}

impl<'py> Handles<'py> {
    fn new(py: Python<'py>) -> Self {
        Handles {
            index: PyDict::new(py),
            objects: Vec::new(),
        }
    }

    fn of(&mut self, object: Bound<'py, PyAny>) -> PyResult<usize> {
        if let Some(i) = self.index.get_item(&object)? {
            return i.extract();
        }
        let i = self.objects.len();
        self.index.set_item(&object, i)?;
        self.objects.push(object);
        Ok(i)
    }

    fn get(&self, handle: usize) -> PyResult<&Bound<'py, PyAny>> {
        self.objects
            .get(handle)
            .ok_or_else(|| PyValueError::new_err("internal: no such handle"))
    }
}

/// The `NoteChunk`s of a note from its plan: `links` are the note's
/// `NoteLink`s, `resolve(target)` a note id or `None` (see `chunk_note`).
#[pyfunction]
#[pyo3(signature = (note_id, body, plan, links, resolve = None))]
fn _notes_chunks<'py>(
    py: Python<'py>,
    note_id: Bound<'py, PyString>,
    body: Bound<'py, PyString>,
    plan: PyRef<'py, NotePlan>,
    links: Bound<'py, PyAny>,
    resolve: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = &plan.rows;
    let targets = Targets::new(py, resolve);
    let mut handles = Handles::new(py);
    let mut starts: Vec<usize> = Vec::new();
    let mut in_suggestions: Vec<bool> = Vec::new();
    let mut link_values: Vec<Bound<'py, NoteLink>> = Vec::new();
    for link in links.try_iter()? {
        let link = link?.cast_into::<NoteLink>()?;
        let values = link.get();
        starts.push(values.value(py, NoteLink::START)?.extract()?);
        in_suggestions.push(values.value(py, NoteLink::IN_SUGGESTIONS)?.is_truthy()?);
        link_values.push(link);
    }
    let spans: Vec<(usize, usize)> = rows.iter().map(|r| (r.start, r.end)).collect();
    let chunk_links = edges::chunk_links(&spans, &starts, &in_suggestions, |i| {
        let target = link_values[i].get().value(py, NoteLink::TARGET)?;
        handles.of(targets.of(&target)?)
    })?;
    let note: PyText = note_id.extract()?;
    let ids = records::link(rows.len(), |k| edges::chunk_id(note.as_str(), k))
        .into_iter()
        .map(|l| Ok((note.to_py(py, &l.id)?.into_any(), l.prev, l.next)))
        .collect::<PyResult<Vec<_>>>()?;
    let none = py.None().into_bound(py);
    let neighbour = |k: Option<usize>| k.map_or_else(|| none.clone(), |k| ids[k].0.clone());
    let chunks = PyList::empty(py);
    for (k, (row, links)) in rows.iter().zip(chunk_links).enumerate() {
        let wikilinks = links
            .wikilinks
            .iter()
            .map(|&h| handles.get(h))
            .collect::<PyResult<Vec<_>>>()?;
        let references = links
            .references
            .iter()
            .map(|&(i, h)| {
                let reference = PyDict::new(py);
                let kind = link_values[i].get().value(py, NoteLink::KIND)?;
                reference.set_item(intern!(py, "kind"), kind)?;
                reference.set_item(intern!(py, "target_id"), handles.get(h)?)?;
                Ok(reference)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let metadata = PyDict::new(py);
        let entries = edges::chunk_metadata(row.overlap_start, row.oversized, row.own, row.block);
        for (key, value) in &entries {
            metadata.set_item(key, value_to_py(py, value)?)?;
        }
        let text = str_slice(py, &body, row.start, row.end)?;
        let embed_text = if row.overlap_start == row.start {
            text.clone()
        } else {
            str_slice(py, &body, row.overlap_start, row.end)?
        };
        let path = PyTuple::new(py, row.path.iter().map(|&h| &plan.titles[h]))?;
        let section_title = match row.path.last() {
            Some(&h) => plan.titles[h].bind(py).clone().into_any(),
            None => none.clone(),
        };
        let (id, prev, next) = &ids[k];
        chunks.append(NoteChunk::from_values(
            py,
            [
                note_id.clone().into_any(),
                id.clone(),
                k.into_bound_py_any(py)?,
                text.into_any(),
                row.start.into_bound_py_any(py)?,
                row.end.into_bound_py_any(py)?,
                row.first_line.into_bound_py_any(py)?,
                row.last_line.into_bound_py_any(py)?,
                section_title,
                path.into_any(),
                neighbour(*prev),
                neighbour(*next),
                row.tokens.into_bound_py_any(py)?,
                row.end.saturating_sub(row.start).into_bound_py_any(py)?,
                embed_text.into_any(),
                PyTuple::new(py, wikilinks)?.into_any(),
                PyTuple::new(py, references)?.into_any(),
                metadata.into_any(),
            ],
        )?)?;
    }
    Ok(chunks)
}

fn edge_kind(py: Python<'_>, kind: edges::EdgeKind) -> &Bound<'_, PyString> {
    match kind {
        edges::EdgeKind::BelongsTo => intern!(py, "belongs_to"),
        edges::EdgeKind::Prev => intern!(py, "prev"),
        edges::EdgeKind::Next => intern!(py, "next"),
        edges::EdgeKind::References => intern!(py, "references"),
        edges::EdgeKind::Backlink => intern!(py, "backlink"),
    }
}

fn scope(py: Python<'_>, scope: edges::Scope) -> &Bound<'_, PyString> {
    match scope {
        edges::Scope::Chunk => intern!(py, "chunk"),
        edges::Scope::Note => intern!(py, "note"),
    }
}

fn status(py: Python<'_>, status: edges::Status) -> &Bound<'_, PyString> {
    match status {
        edges::Status::Ok => intern!(py, "ok"),
        edges::Status::Unresolved => intern!(py, "unresolved"),
    }
}

/// The edges one note owns (see `edges_for_note` and `edges::note_edges`):
/// `chunks` its chunks in order, `known` every note id, `resolve(target)` a
/// note id or `None`.
#[pyfunction]
fn _notes_edges<'py>(
    py: Python<'py>,
    note_id: Bound<'py, PyString>,
    chunks: Bound<'py, PyAny>,
    known: Bound<'py, PyAny>,
    resolve: Bound<'py, PyAny>,
    note_scope_references: bool,
) -> PyResult<Bound<'py, PyList>> {
    let note = note_id.into_any();
    let mut handles = Handles::new(py);
    let mut ids: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut references: Vec<Vec<usize>> = Vec::new();
    for chunk in chunks.try_iter()? {
        let chunk = chunk?;
        ids.push(chunk.getattr(intern!(py, "id"))?);
        let mut targets = Vec::new();
        for reference in chunk.getattr(intern!(py, "references"))?.try_iter()? {
            targets.push(handles.of(reference?.get_item(intern!(py, "target_id"))?)?);
        }
        references.push(targets);
    }
    let graph = edges::note_edges(
        &references,
        |raw| {
            let target = handles.get(raw)?.clone();
            if known.contains(&target)? {
                return Ok::<_, PyErr>(Some(raw));
            }
            let found = resolve.call1((&target,))?;
            if found.is_none() {
                Ok(None)
            } else {
                handles.of(found).map(Some)
            }
        },
        note_scope_references,
    )?;
    let node = |n: edges::Node<usize>| -> PyResult<Bound<'py, PyAny>> {
        Ok(match n {
            edges::Node::Note => note.clone(),
            edges::Node::Chunk(k) => ids[k].clone(),
            edges::Node::Target(h) => handles.get(h)?.clone(),
        })
    };
    let out = PyList::empty(py);
    for e in graph {
        out.append(Edge::from_values(
            py,
            [
                edge_kind(py, e.kind).clone().into_any(),
                node(e.source)?,
                node(e.target)?,
                scope(py, e.scope).clone().into_any(),
                note.clone(),
                status(py, e.status).clone().into_any(),
            ],
        )?)?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_notes_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_edges, m)?)
}
