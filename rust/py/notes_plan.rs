//! The chunk plan of a note body as Python holds it until `chunk_note` makes
//! its chunks (`_NotePlan`): the core's plan in code points.

use pyo3::prelude::*;
#[cfg(feature = "test-hooks")]
use pyo3::types::PyList;
use pyo3::types::PyString;

use super::notes_body::{Body, Chars};
use crate::notes::{plan, scan};

pub(super) fn limits_arg(limits: (usize, usize, usize, usize)) -> PyResult<plan::Limits> {
    let (target_min, target_max, hard_max, min) = limits;
    Ok(plan::Limits::new(target_min, target_max, hard_max, min)?)
}

/// One planned chunk in code points: its span, where its embed text
/// starts, tokens, lines (1-based), its section path (indices into the
/// plan's titles), a quote of its own, oversized, the block kind.
pub(super) struct PlanRow {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) overlap_start: usize,
    pub(super) tokens: usize,
    pub(super) first_line: usize,
    pub(super) last_line: usize,
    pub(super) path: Vec<usize>,
    pub(super) own: bool,
    pub(super) oversized: bool,
    pub(super) block: Option<plan::BlockKind>,
}

/// The chunk plan of one note body (what `chunk_note` makes its chunks of).
#[pyclass(frozen, module = "fastnotebook._core", name = "_NotePlan")]
pub struct NotePlan {
    pub(super) rows: Vec<PlanRow>,
    /// The heading titles of the body, in order.
    pub(super) titles: Vec<Py<PyString>>,
}

#[pymethods]
impl NotePlan {
    fn __len__(&self) -> usize {
        self.rows.len()
    }
}

pub(super) fn plan_rows(st: &scan::Structure<'_>, planned: &[plan::Planned]) -> Vec<PlanRow> {
    let text = st.text;
    let mut spans = Chars::new(text);
    let mut overlaps = Chars::new(text);
    planned
        .iter()
        .map(|p| PlanRow {
            start: spans.of(p.start),
            end: spans.of(p.end),
            overlap_start: overlaps.of(p.overlap_start),
            tokens: p.tokens,
            first_line: p.first_line + 1,
            last_line: p.last_line + 1,
            path: p.path.clone(),
            own: p.own,
            oversized: p.oversized,
            block: p.block,
        })
        .collect()
}

pub(super) fn note_plan(
    py: Python<'_>,
    body: &Body,
    st: &scan::Structure<'_>,
    rows: Vec<PlanRow>,
) -> PyResult<NotePlan> {
    let titles = st
        .headings
        .iter()
        .map(|h| Ok(body.to_py(py, st.heading_title(h))?.unbind()))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(NotePlan { rows, titles })
}

/// Test hook: the rows of a chunk plan: (start, end, overlap start, tokens,
/// first line, last line, section path, own quote, oversized, block kind).
#[cfg(feature = "test-hooks")]
#[pyfunction]
fn _notes_plan_rows<'py>(
    py: Python<'py>,
    plan: PyRef<'py, NotePlan>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = PyList::empty(py);
    for r in &plan.rows {
        let path: Vec<&Py<PyString>> = r.path.iter().map(|&h| &plan.titles[h]).collect();
        rows.append((
            r.start,
            r.end,
            r.overlap_start,
            r.tokens,
            r.first_line,
            r.last_line,
            path,
            r.own,
            r.oversized,
            r.block.map(plan::BlockKind::name),
        ))?;
    }
    Ok(rows)
}

#[cfg(feature = "test-hooks")]
pub(super) fn register_hooks(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_notes_plan_rows, m)?)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NotePlan>()
}
