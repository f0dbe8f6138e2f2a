import { useEffect, useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import type { Problem } from '../api/problem';
import { useApi } from '../session/session';

/**
 * A link's QR code (GET /links/{code}/qr as PNG), shown on demand. The API wants the bearer token, which an
 * <img src> cannot send, so the image is fetched and shown from a blob: URL (the dashboard's CSP allows
 * `img-src blob:` for this), released when it leaves the screen. Also offered as a download.
 */
export function QrCode({ code, shortUrl }: { code: string; shortUrl: string }) {
  const api = useApi();
  const [open, setOpen] = useState(false);
  const [image, setImage] = useState<{ url: string } | { problem: Problem } | null>(null);
  useEffect(() => {
    if (!open) return;
    let url: string | null = null;
    let gone = false;
    void outcome(
      api.GET('/api/v1/links/{code}/qr', {
        params: { path: { code }, query: { format: 'png', size: 256 } },
        parseAs: 'blob',
      }),
    ).then((got) => {
      if (gone) return;
      if (!got.ok) return setImage({ problem: got.problem });
      url = URL.createObjectURL(got.data as Blob);
      setImage({ url });
    });
    return () => {
      gone = true;
      if (url) URL.revokeObjectURL(url);
      setImage(null);
    };
  }, [open, code]);
  return (
    <span class="qr">
      <button
        type="button"
        class="link-button"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        aria-label={`QR code of ${code}`}
      >
        {open ? 'Hide QR' : 'QR'}
      </button>
      {open && (
        <span class="qr-box">
          {image === null && <span role="status">Loading the QR code…</span>}
          {image && 'problem' in image && (
            <span class="field-error" role="alert">
              {image.problem.message}
            </span>
          )}
          {image && 'url' in image && (
            <>
              <img src={image.url} width={128} height={128} alt={`QR code of ${shortUrl}`} />
              <a href={image.url} download={`${code}.png`}>
                Download PNG
              </a>
            </>
          )}
        </span>
      )}
    </span>
  );
}
