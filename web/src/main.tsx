import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api/client.ts';
import { App } from './App.tsx';
import { AuthProvider } from './auth.tsx';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // Client errors (404, 401, 503 vault disabled) are answers, not flukes: no retries for them.
      retry: (count, error) =>
        !(error instanceof ApiError && error.status >= 400 && error.status < 500) &&
        !(error instanceof ApiError && error.status === 503) &&
        count < 2,
      refetchOnWindowFocus: false,
      staleTime: 2_000,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <AuthProvider>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </AuthProvider>
  </StrictMode>,
);
