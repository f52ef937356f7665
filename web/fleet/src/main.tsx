import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { addWords } from '../../shared/words';
import { FLEET_WORDS } from './words';
import { App } from './app';
import '../../shared/styles.css';
import './fleet.css';

// an explicit call: the package is sideEffects: false, so a bare import would be dropped
addWords(FLEET_WORDS);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
