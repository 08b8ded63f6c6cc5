// The page's only way of making DOM: elements with text set through textContent and
// attributes through setAttribute. Nothing from the API is ever parsed as HTML: workload
// names, tenants and reasons are written by tenants and must stay text.

export type Child = Node | string | number | null | undefined | false;

// el("td", {class: "num", title: why}, "3") -> <td class="num" title="...">3</td>
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, ...children);
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function svg(
  tag: string,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: Child[]
): SVGElement {
  const node = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(node, attrs);
  append(node, ...children);
  return node;
}

function setAttrs(node: Element, attrs: Record<string, string | number | boolean | undefined>) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    // Event handler attributes would be script: never set one from here.
    if (/^on/i.test(k)) throw new Error(`dom: refusing event attribute ${k}`);
    node.setAttribute(k, v === true ? "" : String(v));
  }
}

export function append(node: Node, ...children: Child[]) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
}

// Replaces every child of `node`.
export function replace(node: Node, ...children: Child[]) {
  while (node.firstChild) node.removeChild(node.firstChild);
  append(node, ...children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`dom: no element #${id}`);
  return node as T;
}
