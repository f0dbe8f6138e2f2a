/**
 * A short URL that wraps only between its origin and its path, never inside the host: `https://go.example.com`
 * stays on one line (styles.css `.url-origin`), and `/summer-sale` may go to the next. Its text is the URL as is.
 */
export function ShortUrl({ url }: { url: string }) {
  const pathAt = url.indexOf('/', url.indexOf('://') + 3);
  const origin = pathAt < 0 ? url : url.slice(0, pathAt);
  return (
    <span class="short-url">
      <span class="url-origin">{origin}</span>
      <wbr />
      {pathAt < 0 ? '' : url.slice(pathAt)}
    </span>
  );
}
