import type { ComponentChildren, TargetedMouseEvent } from 'preact';
import { navigate } from './router';

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-label'?: string;
  'aria-current'?: 'page' | undefined;
}

/** An ordinary link (it opens in a new tab, it can be copied) that changes screens without a page load. */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
