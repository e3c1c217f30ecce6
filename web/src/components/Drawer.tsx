/**
 * A side panel: a modal <dialog>, so the page behind it is inert and focus stays inside. Escape, the close button or
 * a click on the dimmed page beside it closes it; focus then goes back where it was.
 */
import { t } from '../i18n/index.ts';
import { type MouseEvent, type ReactNode, useEffect, useId, useRef } from 'react';

export function Drawer({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const panel = dialog.current;
    if (!open || !panel) return;
    const previous = document.activeElement as HTMLElement | null;
    panel.showModal();
    return () => {
      if (panel.open) panel.close();
      previous?.focus();
    };
  }, [open]);
  if (!open) return null;

  // A click on the backdrop reaches the dialog itself, outside its box; clicks inside the panel are ignored.
  const closeOnBackdrop = (e: MouseEvent<HTMLDialogElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const inside = e.clientX >= box.left && e.clientX <= box.right && e.clientY >= box.top && e.clientY <= box.bottom;
    if (e.target === e.currentTarget && !inside) onClose();
  };

  return (
    <dialog
      ref={dialog}
      className="drawer"
      aria-labelledby={titleId}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.preventDefault(); // the parent closes (unmounts) it, not the browser behind React's back
        onClose();
      }}
      onCancel={(e) => {
        // Other close requests (Escape while focus is outside the panel, a platform back gesture): same as above.
        e.preventDefault();
        onClose();
      }}
      onClick={closeOnBackdrop}
    >
      <div className="drawer-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" onClick={onClose} aria-label={t('drawer.closeDetails')}>
          ✕
        </button>
      </div>
      <div className="drawer-body">{children}</div>
    </dialog>
  );
}
