//! Self-contained HTML pages: inline CSS, inline SVG figures or PNGs as data URIs,
//! a content security policy that forbids any network access, and one small
//! script that marks the page ready and notes where each figure is (for
//! automated checks in a browser). Same content, same bytes.

use super::draw;
use super::figure::Figure;
use std::fmt::Write as _;

const STYLE: &str = "body{font-family:sans-serif;max-width:1000px;margin:1em auto;padding:0 1em;color:#111}\
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0;display:block;overflow-x:auto;max-width:100%}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
figure.plot{margin:1em 0}figure.plot svg,figure.plot img{max-width:100%;height:auto;display:block}\
figcaption{font-size:.9em;color:#333}pre{background:#f6f6f6;padding:.5em;overflow-x:auto}\
p.note{color:#555;font-style:italic}";

const SCRIPT: &str = "window.addEventListener('load',function(){\
var f=document.querySelectorAll('figure.plot');\
for(var i=0;i<f.length;i++){var r=f[i].querySelector('svg,img').getBoundingClientRect();\
f[i].setAttribute('data-rect',[r.left+scrollX,r.top+scrollY,r.width,r.height].map(Math.round).join(','));}\
document.body.setAttribute('data-plots',f.length);document.body.setAttribute('data-ready','yes');});";

/// A page under construction.
pub struct Page {
    title: String,
    body: String,
}

impl Page {
    pub fn new(title: &str) -> Self {
        let mut p = Page { title: title.to_string(), body: String::new() };
        let _ = writeln!(p.body, "<h1>{}</h1>", escape(title));
        p
    }
    pub fn heading(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h2>{}</h2>", escape(text));
    }
    pub fn para(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }
    /// A remark in italics, e.g. why a plot is missing.
    pub fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p class=\"note\">{}</p>", escape(text));
    }
    /// Trusted HTML (e.g. from [`markdown`]).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
    }
    /// A table folded under a summary line.
    pub fn details_table(&mut self, summary: &str, header: &[&str], rows: &[Vec<String>]) {
        let _ = writeln!(self.body, "<details><summary>{}</summary>", escape(summary));
        self.table(header, rows);
        self.body.push_str("</details>\n");
    }
    /// A table; cells that parse as numbers are right-aligned.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) {
        self.body.push_str("<table>\n<tr>");
        for h in header {
            let _ = write!(self.body, "<th>{}</th>", escape(h));
        }
        self.body.push_str("</tr>\n");
        for row in rows {
            self.body.push_str("<tr>");
            for c in row {
                let numeric = c.split(" / ").all(|x| x == "–" || x.parse::<f64>().is_ok());
                let class = if numeric { " class=\"n\"" } else { "" };
                let _ = write!(self.body, "<td{class}>{}</td>", escape(c));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</table>\n");
    }
    /// Preformatted text, folded under a summary line.
    pub fn pre(&mut self, summary: &str, text: &str) {
        let _ =
            writeln!(self.body, "<details><summary>{}</summary><pre>{}</pre></details>", escape(summary), escape(text));
    }
    /// A figure drawn as inline SVG, or a note when it has no data.
    pub fn figure(&mut self, fig: &Figure) -> anyhow::Result<()> {
        if !fig.has_data() {
            self.note(&format!("{}: no data in this run.", fig.title));
            return Ok(());
        }
        let svg = draw::svg(fig)?;
        let _ = writeln!(
            self.body,
            "<figure class=\"plot\" id=\"fig-{}\">\n{}\n<figcaption>{}</figcaption></figure>",
            escape(&fig.id),
            svg.trim(),
            escape(&fig.caption)
        );
        Ok(())
    }
    /// A PNG image embedded as a data URI.
    pub fn figure_png(&mut self, id: &str, caption: &str, png: &[u8]) {
        let _ = writeln!(
            self.body,
            "<figure class=\"plot\" id=\"fig-{}\"><img alt=\"{}\" src=\"data:image/png;base64,{}\">\n<figcaption>{}</figcaption></figure>",
            escape(id),
            escape(caption),
            base64(png),
            escape(caption)
        );
    }
    /// The finished document.
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n\
<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n</head>\n<body>\n{}</body>\n</html>\n",
            escape(&self.title),
            self.body
        )
    }
}

/// Text safe inside HTML elements and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for ch in bytes.chunks(3) {
        let b = [ch[0], *ch.get(1).unwrap_or(&0), *ch.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            o.push(if k <= ch.len() { A[(n >> shift & 63) as usize] as char } else { '=' });
        }
    }
    o
}

/// Inline Markdown: `code`, **bold**; everything else escaped.
fn inline(s: &str) -> String {
    let mut o = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(o, "<code>{}</code>", escape(part));
            continue;
        }
        for (j, b) in escape(part).split("**").enumerate() {
            if j % 2 == 1 {
                let _ = write!(o, "<strong>{b}</strong>");
            } else {
                o.push_str(b);
            }
        }
    }
    o
}

fn cells(line: &str) -> Vec<&str> {
    line.trim().trim_start_matches('|').trim_end_matches('|').split('|').map(str::trim).collect()
}

/// The Markdown the reproductions write (headings, paragraphs, `- ` lists,
/// pipe tables, `code`, **bold**) as HTML.
pub fn markdown(md: &str) -> String {
    let mut o = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_end();
        if l.trim().is_empty() {
            i += 1;
        } else if let Some(h) = l.strip_prefix('#') {
            let level = 1 + h.chars().take_while(|&c| c == '#').count();
            let _ = writeln!(o, "<h{level}>{}</h{level}>", inline(h.trim_start_matches('#').trim()));
            i += 1;
        } else if l.starts_with('|') {
            o.push_str("<table>\n");
            let mut first = true;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                let row = cells(lines[i]);
                i += 1;
                if row.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':'))) {
                    continue;
                }
                let tag = if first { "th" } else { "td" };
                o.push_str("<tr>");
                for c in row {
                    let _ = write!(o, "<{tag}>{}</{tag}>", inline(c));
                }
                o.push_str("</tr>\n");
                first = false;
            }
            o.push_str("</table>\n");
        } else if l.starts_with("- ") {
            o.push_str("<ul>\n");
            while i < lines.len() && lines[i].starts_with("- ") {
                let _ = writeln!(o, "<li>{}</li>", inline(&lines[i][2..]));
                i += 1;
            }
            o.push_str("</ul>\n");
        } else {
            let mut para = Vec::new();
            while i < lines.len() {
                let t = lines[i].trim_end();
                if t.trim().is_empty() || t.starts_with('#') || t.starts_with('|') || t.starts_with("- ") {
                    break;
                }
                para.push(inline(t.trim()));
                i += 1;
            }
            let _ = writeln!(o, "<p>{}</p>", para.join("\n"));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases =
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")];
        for (i, o) in cases {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn markdown_subset() {
        let md = "# T `x`\n\nSome **bold** <b>\ntext.\n\n- a\n- b\n\n| h | k |\n|---|---|\n| 1 | **2** |\n";
        assert_eq!(
            markdown(md),
            "<h1>T <code>x</code></h1>\n<p>Some <strong>bold</strong> &lt;b&gt;\ntext.</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n\
<table>\n<tr><th>h</th><th>k</th></tr>\n<tr><td>1</td><td><strong>2</strong></td></tr>\n</table>\n"
        );
    }

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }
}
