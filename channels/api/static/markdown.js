// Safe Markdown: the text is escaped first, so raw HTML is shown as text; links are kept only for http(s) URLs.
"use strict";
(function (global) {
  function escapeHtml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }

  function inline(escaped) {
    const codes = [];
    let out = escaped.replace(/`([^`\n]+)`/g, function (_, code) {
      codes.push("<code>" + code + "</code>");
      return "\u0000" + (codes.length - 1) + "\u0000";
    });
    out = out.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, function (whole, label, url) {
      if (!/^https?:\/\//i.test(url)) return label;
      return '<a href="' + url + '" target="_blank" rel="noopener noreferrer">' + label + "</a>";
    });
    out = out.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
    out = out.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>");
    out = out.replace(/(^|[^_\w])_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>");
    return out.replace(/\u0000(\d+)\u0000/g, function (_, i) { return codes[Number(i)]; });
  }

  function block(text) {
    const lines = text.split("\n");
    const html = [];
    let list = null;
    let paragraph = [];
    function flush() {
      if (paragraph.length) html.push("<p>" + paragraph.map(inline).join("<br>") + "</p>");
      paragraph = [];
      if (list) html.push("</" + list + ">");
      list = null;
    }
    for (const line of lines) {
      const bullet = /^\s*[-*] (.*)$/.exec(line);
      const numbered = /^\s*\d+[.)] (.*)$/.exec(line);
      const heading = /^(#{1,6}) (.*)$/.exec(line);
      if (bullet || numbered) {
        const kind = bullet ? "ul" : "ol";
        if (paragraph.length || list !== kind) flush();
        if (!list) { html.push("<" + kind + ">"); list = kind; }
        html.push("<li>" + inline((bullet || numbered)[1]) + "</li>");
      } else if (heading) {
        flush();
        html.push("<p><strong>" + inline(heading[2]) + "</strong></p>");
      } else if (!line.trim()) {
        flush();
      } else {
        if (list) flush();
        paragraph.push(line);
      }
    }
    flush();
    return html.join("");
  }

  function renderMarkdown(text) {
    const parts = escapeHtml(text).split(/^```[^\n]*\n?/m);
    return parts.map(function (part, i) {
      if (i % 2 === 1) return "<pre><code>" + part.replace(/\n$/, "") + "</code></pre>";
      return block(part);
    }).join("");
  }

  global.renderMarkdown = renderMarkdown;
})(window);
